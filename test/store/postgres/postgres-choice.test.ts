import { expect } from "chai";
import pg from "pg";
import { join } from "node:path";
import { CoreApp, silentLogger } from "../../../src/index";
import { createStore, describeStore, STORE_ENV, storeFromEnv } from "../../../src/store/create-store";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { loadConfig } from "../../../src/config/load-config";
import { appOptionsOf } from "../../../src/config/app-options";
import { configIssues, CJS_HANDLERS, issueAt, useTempDir } from "../../config/yaml-helpers";
import { runCli, RunningCli } from "../../cli/cli-process";
import { message } from "../store-conformance";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

describe("Choosing the PostgreSQL store", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  const tmp = useTempDir();
  afterEach(() => fixture.cleanup());

  const urlFor = (schema: string) => `${fixture.url}?schema=${schema}` as `postgres://${string}`;

  it("createStore builds a PostgresStore from a postgres:// or postgresql:// URL, the schema from ?schema=", async () => {
    const schema = fixture.schema();
    const store = createStore(urlFor(schema), { appName: "a", maxQueued: 1 });
    expect(store).to.be.instanceOf(PostgresStore);
    expect(store.engine).to.equal("postgres");
    await store.open();
    try {
      await store.enqueue("q", message("m1"));
      expect(store.admit("q")).to.include({ code: "queue_full" });
      const other = createStore(urlFor(schema).replace(/^postgres:/, "postgresql:") as `postgresql://${string}`, { appName: "a" });
      await other.open();
      expect(await other.depth("q")).to.equal(1);
      await other.close();
    } finally {
      await store.close();
    }
  });

  it("reads $WEBHOOK_TASKS_STORE, refusing what names no store; shows URLs without their password", () => {
    expect(storeFromEnv({})).to.equal(undefined);
    expect(storeFromEnv({ [STORE_ENV]: "" })).to.equal(undefined);
    expect(storeFromEnv({ [STORE_ENV]: "memory" })).to.equal("memory");
    expect(storeFromEnv({ [STORE_ENV]: "postgres://u:secret@h/db" })).to.equal("postgres://u:secret@h/db");
    expect(() => storeFromEnv({ [STORE_ENV]: "mysql://h/db" })).to.throw(TypeError, /WEBHOOK_TASKS_STORE/);
    expect(describeStore("postgres://u:secret@h:5432/db?schema=s")).to.equal("postgres://u:***@h:5432/db?schema=s");
    expect(describeStore("embedded")).to.equal("embedded");
  });

  it("an app without a store option uses the one $WEBHOOK_TASKS_STORE names", async () => {
    const schema = fixture.schema();
    const saved = process.env[STORE_ENV];
    process.env[STORE_ENV] = urlFor(schema);
    const app = new CoreApp("env-store", { logger: silentLogger });
    app.task({ source: "in", name: "t" }, async () => undefined);
    try {
      await app.start();
      expect(app.store.engine).to.equal("postgres");
    } finally {
      if (saved === undefined) delete process.env[STORE_ENV];
      else process.env[STORE_ENV] = saved;
      await app.stop();
    }
  });

  it("YAML: app.store takes a postgres:// URL, from ${DATABASE_URL}; anything else is refused", async () => {
    const body = (store: string) =>
      `app: {name: pg-app, store: "${store}"}\nresources:\n  hook: {type: webhook, path: /x}\ntasks:\n  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n`;
    const saved = process.env.DATABASE_URL;
    process.env.DATABASE_URL = "postgres://app:pw@db.internal:5432/hooks";
    try {
      const config = await loadConfig(tmp.write("pg.yaml", body("${DATABASE_URL}")));
      expect(appOptionsOf(config).store).to.equal("postgres://app:pw@db.internal:5432/hooks");
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
    const issues = await configIssues(loadConfig(tmp.write("bad.yaml", body("mysql://db/hooks"))));
    expect(issueAt(issues, "app.store").message).to.equal("must be memory, embedded or a postgres:// URL");
  });

  it("CLI: run against PostgreSQL, then list, show, replay and purge its dead letters from another process", async () => {
    const schema = fixture.schema();
    const outFile = join(tmp.dir(), "out.jsonl");
    const yaml = tmp.write(
      "failing-pg.yaml",
      [
        "app:",
        "  name: failing-pg",
        "  store: ${DATABASE_URL}",
        "resources:",
        "  hook: {type: webhook, path: /hook, port: 0}",
        "tasks:",
        "  - name: always-fails",
        "    source: hook",
        "    retry: {attempts: 1}",
        `    handler: {ref: "${CJS_HANDLERS}:failUnlessFixed"}`,
        "",
      ].join("\n"),
    );
    const env = { DATABASE_URL: urlFor(schema), OUT_FILE: outFile };
    const check = await runCli(["check", yaml], { ...env, DATABASE_URL: `${fixture.url.replace("postgres://postgres@", "postgres://postgres:hunter2@")}?schema=${schema}` });
    expect(check.stdout).to.contain("store postgres://postgres:***@").and.not.contain("hunter2");

    const cli = new RunningCli([yaml], env);
    try {
      const urls = await cli.urls(1);
      const response = await fetch(urls.get("always-fails")!, { method: "POST", headers: { "content-type": "application/json" }, body: '{"order":1}' });
      expect(response.status).to.equal(202);
      await cli.waitForLog((l) => String(l.msg).includes("dead letter"));

      const list = await runCli(["dead-letters", "list", "--json", yaml], env);
      expect(list.code, list.stderr).to.equal(0);
      const [letter] = JSON.parse(list.stdout) as Array<{ id: string }>;
      const shown = await runCli(["dead-letters", "show", letter.id, yaml], env);
      expect(shown.stdout).to.contain(`id:          ${letter.id}`).and.contain('"order": 1');
      // Replayed while the app runs: it is told at once and runs the event again (and fails again).
      const replay = await runCli(["dead-letters", "replay", letter.id, yaml], env);
      expect(replay.stdout).to.match(/^replayed 1 dead letter/);
      await until(async () => (await runCli(["dead-letters", "list", yaml], env)).stdout.trim() !== "no dead letters", 5_000);
      const purge = await runCli(["dead-letters", "purge", "--all", yaml], env);
      expect(purge.stdout.trim()).to.equal("purged 1 dead letter");
    } finally {
      expect(await cli.stop("SIGTERM")).to.equal(0);
    }
  });

  it("CLI: status and dead-letters of an app that never ran on its schema are refused, and the schema is not created", async () => {
    const schema = fixture.schema();
    const yaml = tmp.write(
      "typo.yaml",
      `app: {name: typo, store: "${urlFor(schema)}"}\nresources:\n  hook: {type: webhook, path: /x}\ntasks:\n  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n`,
    );
    for (const args of [["status", yaml], ["dead-letters", "list", yaml], ["dead-letters", "purge", "--all", yaml]]) {
      const result = await runCli(args);
      expect(result.code, result.stdout).to.equal(1);
      expect(result.stderr.trim()).to.equal(`error: app "typo" has no store in schema "${schema}" at ${describeStore(urlFor(schema))}: it has not run with this store (check app.store and its ?schema=)`);
    }
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      expect((await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rows).to.deep.equal([]);
    } finally {
      await client.end();
    }
  });

  it("CLI: a database that cannot be reached is an error for a command, not a hang; run starts and answers 503 until it can", async () => {
    const yaml = tmp.write(
      "down.yaml",
      `app: {name: down, store: "postgres://postgres@127.0.0.1:1/test"}\nresources:\n  hook: {type: webhook, path: /x, port: 0}\ntasks:\n  - {name: t, source: hook, handler: {ref: "${CJS_HANDLERS}:receive"}}\n`,
    );
    const started = Date.now();
    const result = await runCli(["dead-letters", "list", yaml]);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.match(/cannot open its postgres store: .*ECONNREFUSED/);
    expect(Date.now() - started).to.be.lessThan(10_000);
    // `run` starts (a database that comes up later is taken then), says why it refuses, and stops cleanly.
    const cli = new RunningCli([yaml]);
    try {
      const line = await cli.waitForLog((l) => l.kind === "database");
      expect(line).to.include({ error: "connect ECONNREFUSED 127.0.0.1:1", msg: "the store cannot reach PostgreSQL: webhooks are answered 503 and tasks pause until it can" });
      const [url] = (await cli.urls(1)).values();
      const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(answer.status).to.equal(503);
    } finally {
      expect(await cli.stop()).to.equal(0);
    }
  });
});
