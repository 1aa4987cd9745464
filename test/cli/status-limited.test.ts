import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { StatusReport } from "../../src/cli/status-report";
import { CJS_HANDLERS } from "../config/yaml-helpers";
import { PostgresFixture, TEST_POSTGRES_URL } from "../store/postgres/postgres-fixture";
import { runCli } from "./cli-process";
import { CLI_FIXTURES } from "./fixture-apps";

const KEYED = join(CLI_FIXTURES, "keyed-app.cjs");

/** A YAML app whose task "whole" (fed by a webhook) runs at most 2 at once, on the store `url`. */
function yamlApp(dir: string, url: string): string {
  const file = join(dir, "limited.yaml");
  writeFileSync(
    file,
    [
      "app:",
      `  store: "${url}"`,
      "resources:",
      "  shops: {type: webhook, path: /shops, port: 0}",
      "tasks:",
      `  - {name: whole, source: shops, concurrency: {limit: 2}, handler: {ref: "${CJS_HANDLERS}:receive"}}`,
      "",
    ].join("\n"),
  );
  return file;
}

describe("CLI status counts the messages flow limits hold back (LIMITED), on PostgreSQL", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "webhook-tasks-status-limited-"))));
  afterEach(async () => {
    rmSync(dir, { recursive: true, force: true });
    await fixture.cleanup();
  });

  /** A schema where "webhook:whole" holds 5 messages, 2 of them claimed: with a limit of 2, the other 3 wait. */
  async function limitedQueue(): Promise<string> {
    const schema = fixture.schema();
    const store = fixture.store({ schema });
    await store.open();
    for (let n = 0; n < 5; n++) await store.enqueue("webhook:whole", { id: `m${n}`, payload: { n }, attempts: 0, enqueuedAt: Date.now() });
    expect(await store.claim("webhook:whole", 5, { concurrency: 2 })).to.have.length(2);
    return `${TEST_POSTGRES_URL}?schema=${schema}`;
  }

  async function expectLimited(app: string[], env: Record<string, string>): Promise<void> {
    const json = await runCli(["status", "--json", ...app], env);
    expect(json.code, json.stderr).to.equal(0);
    const whole = (JSON.parse(json.stdout) as StatusReport).queues.find((q) => q.queue === "webhook:whole");
    expect(whole).to.include({ waiting: 3, inFlight: 2, limited: 3 });
    const table = await runCli(["status", ...app], env);
    expect(table.code, table.stderr).to.equal(0);
    const [header, ...lines] = table.stdout.trim().split("\n").map((line) => line.split(/\s{2,}/));
    expect(lines.find((cells) => cells[0] === "webhook:whole")?.[header!.indexOf("LIMITED")]).to.equal("3");
  }

  it("of an app built in code (--module)", async () => {
    await expectLimited(["--module", KEYED], { KEYED_STORE: await limitedQueue() });
  });

  it("of a YAML app", async () => {
    await expectLimited([yamlApp(dir, await limitedQueue())], {});
  });
});
