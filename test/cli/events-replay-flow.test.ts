import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import pg from "pg";
import type { WebhookSource } from "../../src/index";
import { FLOW_RECORDS_NAMESPACE } from "../../src/app/flow/flow-record";
import { EmbeddedStore } from "../../src/store/embedded/embedded-store";
import type { Store } from "../../src/store/store";
import { PostgresFixture, TEST_POSTGRES_URL } from "../store/postgres/postgres-fixture";
import { until } from "../helpers/wait";
import { runCli } from "./cli-process";
import { CLI_FIXTURES, loadFixtureApp } from "./fixture-apps";

const KEYED = join(CLI_FIXTURES, "keyed-app.cjs");
type Keys = Array<{ concurrencyKey: string | undefined; rateKey: string | undefined }>;

interface Engine {
  readonly name: string;
  /** The app's store option and what --store takes. */
  where(): string;
  /** The flow keys of the messages waiting in a queue, as stored. */
  keys(where: string, queue: string): Promise<Keys>;
  /** The store, opened (closed by the test). */
  open(where: string): Promise<Store>;
  cleanup(): Promise<void>;
}

function embedded(): Engine {
  const dirs: string[] = [];
  return {
    name: "embedded",
    where() {
      const dir = mkdtempSync(join(tmpdir(), "webhook-tasks-replay-flow-"));
      dirs.push(dir);
      return dir;
    },
    async open(where) {
      const store = new EmbeddedStore({ dir: where });
      await store.open();
      return store;
    },
    async keys(where, queue) {
      const store = await this.open(where);
      try {
        return (await store.claim(queue, 100)).map((m) => ({ concurrencyKey: m.concurrencyKey, rateKey: m.rateKey }));
      } finally {
        await store.close();
      }
    },
    async cleanup() {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgres(): Engine {
  const fixture = new PostgresFixture();
  let schema = "";
  return {
    name: "postgres",
    where() {
      schema = fixture.schema();
      return `${TEST_POSTGRES_URL}?schema=${schema}`;
    },
    async open() {
      // Registered with the fixture, which drops the schema afterwards.
      const store = fixture.store({ schema });
      await store.open();
      return store;
    },
    async keys(_where, queue) {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT concurrency_key, rate_key FROM "${schema}".messages WHERE queue = $1 ORDER BY seq`, [queue]);
        return rows.map((r: { concurrency_key: string | null; rate_key: string | null }) => ({ concurrencyKey: r.concurrency_key ?? undefined, rateKey: r.rate_key ?? undefined }));
      } finally {
        await client.end();
      }
    },
    cleanup: () => fixture.cleanup(),
  };
}

/** The keyed app run on a new store of `engine` until one delivery for `shop` succeeded; the app stopped. */
async function deliveredOnce(engine: Engine, shop: string): Promise<{ where: string; env: Record<string, string>; id: string }> {
  const where = engine.where();
  const env = { KEYED_STORE: where.startsWith("postgres") ? where : "embedded", DATA_DIR: where };
  const app = loadFixtureApp("keyed-app.cjs", env);
  await app.start();
  try {
    const source = app.tasks[0].source as WebhookSource;
    const response = await fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ shop }) });
    const id = ((await response.json()) as { id: string }).id;
    await until(async () => (await app.events.get(id))?.status === "succeeded", 10_000);
    return { where, env, id };
  } finally {
    await app.stop();
  }
}

for (const engine of [embedded(), postgres()]) {
  describe(`CLI events replay into tasks with flow limits, on the ${engine.name} store`, function () {
    this.timeout(60_000);
    afterEach(() => engine.cleanup());

    it("carries limits it can compute (none keyed, a YAML key path), refuses a key function of the app with --store, and the app argument carries that one", async () => {
      const { where, env, id } = await deliveredOnce(engine, "s-1");
      const store = ["--store", where];

      // Every task at once: refused as a whole (perShop's key is app code), nothing queued for any.
      const all = await runCli(["events", "replay", id, ...store], {});
      expect(all.code).to.equal(1);
      expect(all.stderr).to.contain(`cannot replay event "${id}" to task "perShop" from --store: its concurrency.key is a function of the app's code`);
      expect(all.stderr).to.contain("--module").and.contain("console").and.contain("app.events.replay");
      const one = await runCli(["events", "replay", id, "--task", "perShop", ...store], {});
      expect(one.code).to.equal(1);
      expect(one.stderr).to.contain('to task "perShop" from --store');
      // By filter: each such event skipped, saying why; the count tells none was queued.
      const bulk = await runCli(["events", "replay", "--status", "succeeded", "--task", "perShop", "--json", ...store], {});
      expect(bulk.code, bulk.stderr).to.equal(0);
      expect(JSON.parse(bulk.stdout)).to.deep.equal({ matched: 1, queued: 0, dryRun: false });
      expect(bulk.stderr).to.contain(`skipped ${id}: cannot replay event "${id}" to task "perShop" from --store`);
      const shown = await runCli(["events", "show", id, "--json", ...store], {});
      expect((JSON.parse(shown.stdout) as { replays?: string[] }).replays ?? []).to.deep.equal([]);

      // No key: the task-wide groups. A key path: computed from the event, as the app does.
      for (const task of ["whole", "byPath"]) {
        const replayed = await runCli(["events", "replay", id, "--task", task, "--json", ...store], {});
        expect(replayed.code, replayed.stderr).to.equal(0);
      }
      expect(await engine.keys(where, "webhook:whole")).to.deep.equal([{ concurrencyKey: "", rateKey: "" }]);
      expect(await engine.keys(where, "webhook:byPath")).to.deep.equal([{ concurrencyKey: "s-1", rateKey: undefined }]);

      // With the app (its code imported), the key function runs.
      const viaModule = await runCli(["events", "replay", id, "--task", "perShop", "--json", "--module", KEYED], env);
      expect(viaModule.code, viaModule.stderr).to.equal(0);
      expect(await engine.keys(where, "webhook:perShop")).to.deep.equal([{ concurrencyKey: "s-1", rateKey: undefined }]);

      // With a YAML app's file: its key path, as the app builds it.
      const dir = mkdtempSync(join(tmpdir(), "webhook-tasks-replay-flow-yaml-"));
      try {
        const yaml = join(dir, "worker.yaml");
        const storeLines = where.startsWith("postgres") ? `  store: "${where}"\n` : `  store: embedded\n  dataDir: "${where}"\n`;
        writeFileSync(yaml, `app:\n  name: keyed-app\n${storeLines}resources:\n  shops: {type: webhook, path: /shops}\ntasks:\n  - name: byPath\n    source: shops\n    handler: {ref: ./h.js:run}\n    concurrency: {limit: 1, key: body.shop}\n    rateLimit: {limit: 5, periodMs: 1000}\n`);
        const viaYaml = await runCli(["events", "replay", id, "--task", "byPath", "--json", yaml]);
        expect(viaYaml.code, viaYaml.stderr).to.equal(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      expect(await engine.keys(where, "webhook:byPath")).to.deep.equal([{ concurrencyKey: "s-1", rateKey: undefined }, { concurrencyKey: "s-1", rateKey: "" }]);
    });

    it("refuses with --store a task whose limits the store holds no note of (written before the app noted them)", async () => {
      const { where, id } = await deliveredOnce(engine, "s-2");
      // As a store an earlier version wrote: no note.
      const opened = await engine.open(where);
      expect(await opened.state(FLOW_RECORDS_NAMESPACE).delete("whole")).to.equal(true);
      await opened.close();
      const refused = await runCli(["events", "replay", id, "--task", "whole", "--store", where], {});
      expect(refused.code).to.equal(1);
      expect(refused.stderr).to.contain('to task "whole" from --store: the store holds no note of the task\'s flow limits');
      expect(await engine.keys(where, "webhook:whole")).to.deep.equal([]);
    });
  });
}
