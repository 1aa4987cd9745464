import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { StatusReport } from "../../src/cli/status-report";
import { PostgresFixture, TEST_POSTGRES_URL } from "../store/postgres/postgres-fixture";
import { runCli } from "./cli-process";
import { CLI_FIXTURES, loadFixtureApp, runUntilDead } from "./fixture-apps";

const PLAIN = join(CLI_FIXTURES, "plain-app.cjs");
const MIXED = join(CLI_FIXTURES, "mixed-app.cjs");

/** The table's rows by queue: each row's cells. */
function rows(stdout: string): Map<string, string[]> {
  return new Map(stdout.trim().split("\n").slice(1).map((line) => {
    const cells = line.split(/\s{2,}/);
    return [cells[0], cells];
  }));
}

describe("CLI: status and dead-letters of apps built in code (--module)", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "webhook-tasks-module-apps-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads a plain `new CoreApp` app with an embedded store: its queues, consumers, producers and dead letters", async () => {
    const env = { PLAIN_SECRET: "s3cret-token", DATA_DIR: join(dir, "store") };
    const app = loadFixtureApp("plain-app.cjs", env);
    await runUntilDead(app, { receive: { body: { order: 1 }, headers: { authorization: "Bearer s3cret-token" } } }, 1);

    const table = await runCli(["status", "--module", PLAIN], env);
    expect(table.code, table.stderr).to.equal(0);
    const byQueue = rows(table.stdout);
    expect(byQueue.get("webhook:receive")?.slice(1)).to.deep.equal(["0", "0", "0", "-", "0", "receive", "-"]);
    expect(byQueue.get("orders")?.slice(1)).to.deep.equal(["0", "0", "0", "-", "1", "ship", "receive"]);

    const json = await runCli(["status", "--json", "--module", PLAIN], env);
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report.app).to.equal("plain-app");
    expect(report.store).to.deep.equal({ engine: "embedded", location: join(dir, "store") });
    expect(report.tasks).to.deep.equal([
      { name: "receive", queue: "webhook:receive", emit: "orders" },
      { name: "ship", queue: "orders", emit: null },
    ]);
    expect(report.queues.find((q) => q.queue === "orders")).to.deep.include({ deadLetters: 1, consumer: "ship", producers: ["receive"] });

    const list = await runCli(["dead-letters", "list", "--json", "--module", PLAIN], env);
    const letters = JSON.parse(list.stdout) as Array<{ id: string; task: string; queue: string; payload: unknown }>;
    expect(letters.map((l) => [l.task, l.queue])).to.deep.equal([["ship", "orders"]]);
    expect(letters[0].payload).to.deep.equal({ order: 1 });
  });

  it("reads a plain `new CoreApp` app with a PostgreSQL store", async () => {
    const postgres = new PostgresFixture();
    try {
      const env = { PLAIN_SECRET: "s3cret-token", PLAIN_STORE: `${TEST_POSTGRES_URL}?schema=${postgres.schema()}` };
      await runUntilDead(loadFixtureApp("plain-app.cjs", env), { receive: { body: { order: 2 }, headers: { authorization: "Bearer s3cret-token" } } }, 1);
      const json = await runCli(["status", "--json", "--module", PLAIN], env);
      expect(json.code, json.stderr).to.equal(0);
      const report = JSON.parse(json.stdout) as StatusReport;
      expect(report.store.engine).to.equal("postgres");
      expect(report.queues.map((q) => [q.queue, q.deadLetters, q.consumer])).to.deep.equal([
        ["webhook:receive", 0, "receive"],
        ["orders", 1, "ship"],
      ]);
      const purge = await runCli(["dead-letters", "purge", "--all", "--module", PLAIN], env);
      expect(purge.stdout.trim()).to.equal("purged 1 dead letter");
    } finally {
      await postgres.cleanup();
    }
  });

  it("reads a mixed app (a @Module class built with createApp, plus app.task): every consumer, every queue's dead letters", async () => {
    const env = { DATA_DIR: join(dir, "mixed") };
    await runUntilDead(loadFixtureApp("mixed-app.cjs", env), { receive: { body: { parcel: 1 } }, audit: { body: { check: 1 } } }, 2);
    const table = await runCli(["status", "--module", MIXED], env);
    expect(table.code, table.stderr).to.equal(0);
    const byQueue = rows(table.stdout);
    // Read from the @Module class alone, "parcels" had no consumer and "webhook:audit" no row.
    expect(byQueue.get("parcels")?.slice(5)).to.deep.equal(["1", "pack", "receive"]);
    expect(byQueue.get("webhook:audit")?.slice(5)).to.deep.equal(["1", "audit", "-"]);
    expect([...byQueue.values()].reduce((sum, cells) => sum + Number(cells[5]), 0)).to.equal(2);
    const list = await runCli(["dead-letters", "list", "--json", "--module", MIXED], env);
    expect((JSON.parse(list.stdout) as unknown[]).length).to.equal(2);
  });

  it("reads an ES module whose default export is the app", async () => {
    const env = { DATA_DIR: join(dir, "default") };
    const module = join(CLI_FIXTURES, "default-app.mjs");
    const first = await runCli(["status", "--module", module], env);
    expect(first.code).to.equal(1);
    expect(first.stderr.trim()).to.match(/^error: app "default-app" has no store at .*default: it has not run/);
    mkdirSync(env.DATA_DIR);
    const second = await runCli(["status", "--module", module], env);
    expect(second.code, second.stderr).to.equal(0);
    expect(rows(second.stdout).get("ticks")?.slice(1)).to.deep.equal(["0", "0", "0", "-", "0", "tick", "-"]);
  });

  it("refuses a file exporting two apps, or none, listing what it found", async () => {
    const two = await runCli(["status", "--module", join(CLI_FIXTURES, "two-apps.cjs")]);
    expect(two.code).to.equal(1);
    expect(two.stderr.trim()).to.equal(
      `error: ${join(CLI_FIXTURES, "two-apps.cjs")} exports 2 apps (CoreApp "billing" as billing, CoreApp "shipping" as shipping); give a file that exports one`,
    );
    const handlers = join(CLI_FIXTURES, "../yaml/handlers.cjs");
    const noApp = await runCli(["status", "--module", handlers]);
    expect(noApp.code).to.equal(1);
    expect(noApp.stderr.trim()).to.match(/handlers\.cjs exports no app \(found SomeClass, consume, fail, failUnlessFixed, notAFunction, receive\): export a CoreApp instance/);
  });

  it("refuses an app whose store is an object: only the app can open it", async () => {
    const result = await runCli(["dead-letters", "list", "--module", join(CLI_FIXTURES, "store-instance-app.cjs")]);
    expect(result.code).to.equal(1);
    expect(result.stderr.trim()).to.equal('error: app "instance-app" gives its store as an object: the CLI cannot open it apart from the app; name it with --store <postgres-url | data-dir>');
  });

  it("refuses a module whose import throws, with the module's own message", async () => {
    const result = await runCli(["status", "--module", PLAIN], { PLAIN_SECRET: "" });
    expect(result.code).to.equal(1);
    expect(result.stderr.trim()).to.equal(`error: cannot load module ${PLAIN}: PLAIN_SECRET must be set`);
  });
});
