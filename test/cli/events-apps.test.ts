import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { CoreApp } from "../../src/app/core-app";
import { until } from "../helpers/wait";
import { runCli } from "./cli-process";
import { CLI_FIXTURES, loadFixtureApp, runUntilDead } from "./fixture-apps";

const PLAIN = join(CLI_FIXTURES, "plain-app.cjs");
const MIXED = join(CLI_FIXTURES, "mixed-app.cjs");
const SECRET = "plain-secret-do-not-print";

interface Listed {
  id: string;
  origin: { kind: string; source?: string; queue?: string };
  status: string;
  parentId?: string;
  replayOf?: string;
  deliveries: Array<{ task: string; status: string }>;
}

async function listed(args: readonly string[], env: Record<string, string> = {}): Promise<Listed[]> {
  const result = await runCli(["events", "list", "--json", ...args], env);
  expect(result.code, result.stderr).to.equal(0);
  return (JSON.parse(result.stdout) as { events: Listed[] }).events;
}

/** Starts the app until `done` holds, then stops it. */
async function runUntil(app: CoreApp, done: () => Promise<boolean>): Promise<void> {
  await app.start();
  try {
    await until(done, 20_000);
  } finally {
    await app.stop();
  }
}

describe("CLI events on real apps: a plain CoreApp, a mixed app, and --store with no secret", function () {
  this.timeout(180_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "webhook-tasks-events-apps-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a plain CoreApp: list and show by --module and by --store (no secret), replay a dead delivery after the fix, and the app runs it", async () => {
    const data = join(dir, "plain");
    await runUntilDead(loadFixtureApp("plain-app.cjs", { PLAIN_SECRET: SECRET, DATA_DIR: data }), { receive: { body: { order: 7 }, headers: { authorization: `Bearer ${SECRET}` } } }, 1);

    const viaModule = await listed(["--module", PLAIN], { PLAIN_SECRET: SECRET, DATA_DIR: data });
    const viaStore = await listed(["--store", data], { PLAIN_SECRET: "" });
    expect(viaStore).to.deep.equal(viaModule);
    // Newest first: the value "receive" emitted, then the webhook event.
    const [child, webhookEvent] = viaStore;
    expect(webhookEvent).to.deep.include({ origin: { kind: "webhook", source: "orders" }, status: "succeeded" });
    expect(child).to.deep.include({ origin: { kind: "queue", queue: "orders" }, status: "dead", parentId: webhookEvent.id });
    expect(child.deliveries).to.deep.equal([{ task: "ship", queue: "orders", messageId: child.id, status: "dead", attempts: 1, lastError: "carrier down" }]);

    const shown = await runCli(["events", "show", webhookEvent.id, "--store", data], { PLAIN_SECRET: "" });
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.contain(`children:    ${child.id}`).and.contain('"order": 7');
    expect(shown.stdout).not.to.contain(SECRET);
    const shownChild = await runCli(["events", "show", child.id, "--store", data], { PLAIN_SECRET: "" });
    expect(shownChild.stdout).to.contain(`parent:      ${webhookEvent.id}`).and.match(/1\. ship {2}attempt 1 .* dead_letter\n {5}error: Error: carrier down\n {7}at /);

    // The bug is fixed: replay the dead delivery from the CLI (no app code), then run the app.
    const replayed = await runCli(["events", "replay", "--status", "dead", "--since", "1h", "--json", "--store", data], { PLAIN_SECRET: "" });
    expect(replayed.code, replayed.stderr).to.equal(0);
    expect(JSON.parse(replayed.stdout)).to.deep.equal({ matched: 1, queued: 1, dryRun: false });
    const fixed = loadFixtureApp("plain-app.cjs", { PLAIN_SECRET: SECRET, DATA_DIR: data, PLAIN_CARRIER: "up" });
    await runUntil(fixed, async () => (await fixed.events.list({ status: "succeeded", task: "ship" })).events.length === 1);

    const after = await listed(["--store", data]);
    const replay = after.find((e) => e.replayOf === child.id)!;
    expect(replay).to.deep.include({ status: "succeeded", origin: { kind: "queue", queue: "orders" } });
    const original = JSON.parse((await runCli(["events", "show", child.id, "--json", "--store", data])).stdout) as { replays: string[]; status: string };
    expect(original).to.deep.include({ replays: [replay.id], status: "dead" });
    const again = await runCli(["events", "replay", "--status", "dead", "--dry-run", "--store", data]);
    expect(again.stdout).to.equal("would replay 1 event (dry run: nothing queued)\n");
  });

  it("a mixed app (@Module and app.task): filters by status, task and source, by --module and --store", async () => {
    const data = join(dir, "mixed");
    await runUntilDead(loadFixtureApp("mixed-app.cjs", { DATA_DIR: data }), { audit: { body: { check: 1 } }, receive: { body: { parcel: 2 } } }, 2);
    const dead = await listed(["--status", "dead", "--module", MIXED], { DATA_DIR: data });
    expect(dead.map((e) => e.deliveries[0].task).sort()).to.deep.equal(["audit", "pack"]);
    expect(await listed(["--status", "dead", "--store", data])).to.deep.equal(dead);
    const audits = await listed(["--source", "audits", "--store", data]);
    expect(audits.map((e) => e.deliveries.map((d) => d.task))).to.deep.equal([["audit"]]);
    const packed = await listed(["--task", "pack", "--store", data]);
    expect(packed).to.have.length(1);
    expect(packed[0].parentId).to.be.a("string");
    const table = await runCli(["events", "list", "--status", "dead", "--module", MIXED], { DATA_DIR: data });
    expect(table.stdout.split("\n")[0]).to.match(/^ID\s+RECEIVED\s+FROM\s+NAME\s+STATUS\s+DELIVERIES$/);
  });

  it("refuses, saying why: an app with its history off (module and YAML), an app on the memory store, a YAML app on the memory store, an unknown store", async () => {
    const data = join(dir, "off");
    const offApp = loadFixtureApp("plain-app.cjs", { PLAIN_SECRET: SECRET, DATA_DIR: data, PLAIN_HISTORY: "off" });
    await offApp.start();
    await offApp.stop();
    const refused = await runCli(["events", "list", "--module", PLAIN], { PLAIN_SECRET: SECRET, DATA_DIR: data, PLAIN_HISTORY: "off" });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.equal('error: app "plain-app" has its event history off (history: false): no event is kept to list, show or replay; turn it on to keep them\n');

    const memory = await runCli(["events", "list", "--module", PLAIN], { PLAIN_SECRET: SECRET, PLAIN_STORE: "memory" });
    expect(memory.code).to.equal(1);
    expect(memory.stderr).to.match(/^error: app "plain-app" uses the memory store: its event history lives only inside the running process; read it there with app\.events/);

    const yaml = join(dir, "worker.yaml");
    writeFileSync(yaml, "app:\n  name: yaml-app\n  store: memory\nresources:\n  hooks: {type: webhook, path: /hooks}\ntasks:\n  - name: t\n    source: hooks\n    handler: {ref: ./h.js:run}\n");
    const fromYaml = await runCli(["events", "show", "e1", yaml]);
    expect(fromYaml.code, fromYaml.stdout).to.equal(1);
    expect(fromYaml.stderr).to.match(/^error: app "yaml-app" uses the memory store: its event history lives only inside the running process/);

    const off = join(dir, "off.yaml");
    writeFileSync(off, "app:\n  name: quiet-app\n  store: embedded\n  history: false\nresources:\n  hooks: {type: webhook, path: /hooks}\ntasks:\n  - name: t\n    source: hooks\n    handler: {ref: ./h.js:run}\n");
    const offYaml = await runCli(["events", "replay", "--status", "dead", off]);
    expect(offYaml.code).to.equal(1);
    expect(offYaml.stderr).to.equal('error: app "quiet-app" has its event history off (history: false): no event is kept to list, show or replay; turn it on to keep them\n');

    const nowhere = await runCli(["events", "list", "--store", join(dir, "nothing-here")]);
    expect(nowhere.code).to.equal(1);
    expect(nowhere.stderr).to.match(/^error: no embedded store at .*nothing-here \(no data\.mdb there\)/);
  });
});
