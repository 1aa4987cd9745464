import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { CONSUMER_UNKNOWN } from "../../src/cli/status-command";
import type { StatusReport } from "../../src/cli/status-report";
import { PostgresFixture, TEST_POSTGRES_URL } from "../store/postgres/postgres-fixture";
import { runCli } from "./cli-process";
import { CLI_FIXTURES, loadFixtureApp, runUntilDead } from "./fixture-apps";

const PLAIN = join(CLI_FIXTURES, "plain-app.cjs");
/** What the CLI children get: the app's secret unset, so importing the app would throw. */
const NO_SECRET = { PLAIN_SECRET: "" };
const SECRET_HEADERS = { authorization: "Bearer s3cret-token", cookie: "session=cookie-value", "x-api-key": "key-value" };

interface Letter {
  id: string;
  queue: string;
  task: string;
  payload: { headers?: Record<string, string> };
}

describe("CLI: --store <postgres-url | data-dir>, no app imported", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "webhook-tasks-store-option-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads an embedded store with the app's secret unset: every queue, consumer unknown, dead letters listed and shown redacted", async () => {
    const data = join(dir, "store");
    // The audit task fails on its webhook event: a dead letter holding the request's headers.
    await runUntilDead(loadFixtureApp("mixed-app.cjs", { DATA_DIR: data }), { audit: { body: { check: 1 }, headers: SECRET_HEADERS }, receive: { body: { parcel: 2 } } }, 2);
    // Importing the app now would throw: --module refuses, --store does not import it.
    const viaModule = await runCli(["status", "--module", PLAIN], NO_SECRET);
    expect(viaModule.stderr).to.contain("PLAIN_SECRET must be set");

    const table = await runCli(["status", "--store", data], NO_SECRET);
    expect(table.code, table.stderr).to.equal(0);
    const lines = table.stdout.trim().split("\n");
    expect(lines.slice(1, -1).map((l) => l.split(/\s{2,}/))).to.deep.equal([
      ["parcels", "0", "0", "0", "-", "1", "?", "?"],
      ["webhook:audit", "0", "0", "0", "-", "1", "?", "?"],
    ]);
    expect(lines.at(-1)).to.equal(CONSUMER_UNKNOWN);

    const json = await runCli(["status", "--json", "--store", data], NO_SECRET);
    const report = JSON.parse(json.stdout) as StatusReport;
    expect(report).to.deep.include({ app: null, tasks: null, store: { engine: "embedded", location: data } });
    expect(report.queues.map((q) => [q.queue, q.depth, q.deadLetters, q.consumer, q.producers])).to.deep.equal([
      ["parcels", 0, 1, null, null],
      ["webhook:audit", 0, 1, null, null],
    ]);

    const list = await runCli(["dead-letters", "list", "--json", "--queue", "webhook:audit", "--store", data], NO_SECRET);
    const [letter] = JSON.parse(list.stdout) as Letter[];
    expect(letter).to.deep.include({ queue: "webhook:audit", task: "audit" });
    // The credential of the source's auth is stripped before storing; the others are kept, and redacted when shown.
    expect(letter.payload.headers).to.deep.include({ cookie: "[redacted]", "x-api-key": "[redacted]", "content-type": "application/json" });
    const shownJson = await runCli(["dead-letters", "show", letter.id, "--json", "--store", data], NO_SECRET);
    expect((JSON.parse(shownJson.stdout) as Letter).payload.headers).to.deep.include({ cookie: "[redacted]", "x-api-key": "[redacted]" });
    const shown = await runCli(["dead-letters", "show", letter.id, "--store", data], NO_SECRET);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.match(/"cookie": "\[redacted\]"/).and.to.match(/"x-api-key": "\[redacted\]"/);
    for (const output of [list.stdout, shownJson.stdout, shown.stdout]) expect(output).to.not.match(/cookie-value|key-value|s3cret-token/);

    const replay = await runCli(["dead-letters", "replay", letter.id, "--store", data], NO_SECRET);
    expect(replay.stdout).to.match(/^replayed 1 dead letter/);
    const purge = await runCli(["dead-letters", "purge", "--all", "--store", data], NO_SECRET);
    expect(purge.stdout.trim()).to.equal("purged 1 dead letter");
    const after = JSON.parse((await runCli(["status", "--json", "--store", data], NO_SECRET)).stdout) as StatusReport;
    expect(after.queues.map((q) => [q.queue, q.depth, q.deadLetters])).to.deep.equal([["webhook:audit", 1, 0]]);
  });

  it("reads a PostgreSQL store by URL, ?schema= honoured, and never prints the URL's password", async () => {
    const postgres = new PostgresFixture();
    try {
      const schema = postgres.schema();
      // The server trusts local connections: the password is there only to be kept out of the output.
      const url = `${TEST_POSTGRES_URL.replace("postgres://postgres@", "postgres://postgres:pw-do-not-print@")}?schema=${schema}`;
      await runUntilDead(loadFixtureApp("plain-app.cjs", { PLAIN_SECRET: "s3cret-token", PLAIN_STORE: url }), { receive: { body: { order: 3 }, headers: { authorization: "Bearer s3cret-token" } } }, 1);
      const json = await runCli(["status", "--json", "--store", url], NO_SECRET);
      expect(json.code, json.stderr).to.equal(0);
      const report = JSON.parse(json.stdout) as StatusReport;
      expect(report.store.engine).to.equal("postgres");
      expect(report.store.location).to.contain(":***@").and.to.contain(`schema=${schema}`);
      expect(report.queues.map((q) => [q.queue, q.deadLetters, q.consumer])).to.deep.equal([["orders", 1, null]]);
      const table = await runCli(["status", "--store", url], NO_SECRET);
      expect(table.stdout).to.match(/^orders\s+0\s+0\s+0\s+-\s+1\s+\?\s+\?$/m);
      const list = await runCli(["dead-letters", "list", "--store", url], NO_SECRET);
      expect(list.stdout).to.match(/\sship\s+orders\s+1\s/);
      const missing = url.replace(`schema=${schema}`, "schema=no_such_schema");
      const refused = await runCli(["status", "--store", missing], NO_SECRET);
      expect(refused.code).to.equal(1);
      expect(refused.stderr.trim()).to.match(/^error: no webhook-tasks store in schema "no_such_schema" at postgres:\/\/postgres:\*\*\*@/);
      for (const output of [json, table, list, refused]) expect(output.stdout + output.stderr).to.not.contain("pw-do-not-print");
    } finally {
      await postgres.cleanup();
    }
  });

  it("refuses a directory holding no store, a URL of another scheme, and --module with --store or a YAML file", async () => {
    const empty = join(dir, "empty");
    mkdirSync(empty);
    for (const path of [empty, join(dir, "missing")]) {
      const result = await runCli(["status", "--store", path]);
      expect(result.code).to.equal(1);
      expect(result.stderr.trim()).to.equal(`error: no embedded store at ${path} (no data.mdb there): give the data directory of an app that ran`);
    }
    const mysql = await runCli(["dead-letters", "list", "--store", "mysql://root:hunter2@db/app"]);
    expect(mysql.code).to.equal(1);
    expect(mysql.stderr.trim()).to.equal("error: --store mysql://…: give a postgres:// URL or the data directory of an embedded store");
    const both = await runCli(["status", "--module", PLAIN, "--store", empty]);
    expect(both.code).to.equal(2);
    expect(both.stderr).to.match(/^error: give --module or --store, not both/);
    const yamlToo = await runCli(["dead-letters", "list", "worker.yaml", "--store", empty]);
    expect(yamlToo.code).to.equal(2);
    expect(yamlToo.stderr).to.match(/^error: give a worker\.yaml file or --store, not both \(worker\.yaml and --store\)/);
    const noTarget = await runCli(["dead-letters", "show", "--store", empty]);
    expect(noTarget.code).to.equal(2);
    expect(noTarget.stderr).to.match(/^error: usage: dead-letters show <id> <worker\.yaml \| --module file\.js \| --store postgres-url\|data-dir>/);
  });
});
