import { FLOW_RECORDS_NAMESPACE, recordTaskFlows } from "../../src/app/flow/flow-record";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { EventNote, HistoryStore, RunNote } from "../../src/store/history";
import { EmbeddedStore } from "../../src/store/embedded/embedded-store";
import type { Store } from "../../src/store/store";
import { PostgresFixture, TEST_POSTGRES_URL } from "../store/postgres/postgres-fixture";
import { runCli } from "./cli-process";
import { until } from "../helpers/wait";

/** What the CLI children get: nothing of an app, no secret. */
const NO_SECRET = { PLAIN_SECRET: "" };
const SECRET = "Bearer s3cret-token-do-not-print";
const SIGNATURE = "sha256=do-not-print-signature";
const T0 = Date.parse("2026-11-24T10:00:00Z");

interface Engine {
  readonly name: string;
  /** A new store with a history, opened; `where` is what --store takes. */
  make(): Promise<{ store: Store; where: string }>;
  cleanup(): Promise<void>;
}

function embedded(): Engine {
  let dir = "";
  return {
    name: "embedded",
    async make() {
      dir = mkdtempSync(join(tmpdir(), "webhook-tasks-events-cli-"));
      const store = new EmbeddedStore({ dir });
      await store.open();
      return { store, where: dir };
    },
    async cleanup() {
      if (dir !== "") rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgres(): Engine {
  const fixture = new PostgresFixture();
  return {
    name: "postgres",
    async make() {
      const schema = fixture.schema();
      const store = fixture.store({ schema });
      await store.open();
      return { store, where: `${TEST_POSTGRES_URL}?schema=${schema}` };
    },
    cleanup: () => fixture.cleanup(),
  };
}

/** A webhook event handed to two tasks (one copy each), one of which died; and the value the other emitted. */
function seed(history: HistoryStore): { dead: string; child: string } {
  const dead = "evt-dead-1";
  const child = "child-of-dead";
  const event: EventNote = {
    id: dead,
    origin: { kind: "webhook", source: "orders" },
    name: "order.created",
    receivedAt: T0,
    deliveries: [
      { task: "ship", queue: "webhook:ship", messageId: `${dead}@ship` },
      { task: "audit", queue: "webhook:audit", messageId: `${dead}@audit` },
    ],
    // Noted as the engines are given it (redacted by the app); the CLI redacts again whatever it finds.
    payload: { body: { order: { id: 42, customer: "octo" } }, headers: { "content-type": "application/json", authorization: SECRET, "x-hub-signature-256": SIGNATURE }, method: "POST", path: "/orders", query: {} },
    raw: Buffer.from('{"order":{"id":42,"customer":"octo"}}'),
  };
  history.noteEvent(event);
  const runs: RunNote[] = [
    { eventId: dead, status: "failed", run: { task: "ship", attempt: 1, startedAt: T0 + 10, durationMs: 4.5, outcome: "retry", error: { type: "TypeError", message: "carrier down", stack: "TypeError: carrier down\n    at ship (ship.js:3:9)" } } },
    { eventId: dead, status: "dead", run: { task: "ship", attempt: 2, startedAt: T0 + 2_000, durationMs: 3.1, outcome: "dead_letter", error: { type: "TypeError", message: "carrier still down", stack: "TypeError: carrier still down\n    at ship (ship.js:3:9)" } } },
    { eventId: dead, status: "succeeded", run: { task: "audit", attempt: 1, startedAt: T0 + 12, durationMs: 1.2, outcome: "success", emitted: [child] } },
  ];
  for (const run of runs) history.noteRun(run);
  history.noteEvent({ id: child, origin: { kind: "queue", queue: "audit-log" }, receivedAt: T0 + 14, deliveries: [{ task: "archive", queue: "audit-log", messageId: child }], payload: { audited: 42 }, parentId: dead });
  for (let i = 0; i < 5; i++) {
    history.noteEvent({ id: `evt-ok-${i}`, origin: { kind: "webhook", source: "orders" }, receivedAt: T0 + 60_000 + i, deliveries: [{ task: "ship", queue: "webhook:ship", messageId: `evt-ok-${i}` }], payload: { body: { n: i }, headers: {} } });
    history.noteRun({ eventId: `evt-ok-${i}`, status: "succeeded", run: { task: "ship", attempt: 1, startedAt: T0 + 60_010 + i, durationMs: 1, outcome: "success" } });
  }
  return { dead, child };
}

/** The tasks' flow limits (none) as their app notes them when it starts: --store replays only into tasks so noted. */
async function noteFlows(store: Store): Promise<void> {
  const tasks = [
    { name: "ship", queue: "webhook:ship" },
    { name: "audit", queue: "webhook:audit" },
    { name: "archive", queue: "audit-log" },
  ];
  await recordTaskFlows(store.state(FLOW_RECORDS_NAMESPACE), tasks.map((t) => ({ ...t, flow: undefined })));
}

for (const engine of [embedded(), postgres()]) {
  describe(`CLI events on the ${engine.name} store (--store, no app, no secret)`, () => {
    let store: Store;
    let where: string;
    beforeEach(async () => {
      ({ store, where } = await engine.make());
    });
    afterEach(async () => {
      await store.close().catch(() => undefined);
      await engine.cleanup();
    });

    it("list: newest first, every filter, pages with the cursor it prints; show: runs with errors and stacks, links, headers redacted, body pretty", async function () {
      this.timeout(180_000);
      const { dead, child } = seed(store.history!);
      await store.history!.flush();

      const all = await runCli(["events", "list", "--store", where], NO_SECRET);
      expect(all.code, all.stderr).to.equal(0);
      const rows = all.stdout.trim().split("\n");
      expect(rows[0].split(/\s{2,}/)).to.deep.equal(["ID", "RECEIVED", "FROM", "NAME", "STATUS", "DELIVERIES"]);
      expect(rows.slice(1).map((r) => r.split(/\s+/)[0])).to.deep.equal(["evt-ok-4", "evt-ok-3", "evt-ok-2", "evt-ok-1", "evt-ok-0", child, dead]);
      expect(rows.at(-1)).to.contain("source orders").and.contain("order.created").and.contain("dead").and.contain("ship:dead(2)").and.contain("audit:succeeded");

      const paged = await runCli(["events", "list", "--limit", "3", "--store", where], NO_SECRET);
      const more = paged.stdout.trim().split("\n").at(-1)!;
      expect(more).to.match(/^more: add --cursor \S+$/);
      const next = await runCli(["events", "list", "--limit", "3", "--json", "--cursor", more.split(" ").at(-1)!, "--store", where], NO_SECRET);
      const page = JSON.parse(next.stdout) as { events: Array<{ id: string; receivedAt: string }>; next?: string };
      expect(page.events.map((e) => e.id)).to.deep.equal(["evt-ok-1", "evt-ok-0", child]);
      expect(page.events[0].receivedAt).to.equal(new Date(T0 + 60_001).toISOString());

      const filtered = async (...flags: string[]) => {
        const result = await runCli(["events", "list", "--json", ...flags, "--store", where], NO_SECRET);
        expect(result.code, result.stderr).to.equal(0);
        return (JSON.parse(result.stdout) as { events: Array<{ id: string }> }).events.map((e) => e.id);
      };
      expect(await filtered("--status", "dead")).to.deep.equal([dead]);
      expect(await filtered("--task", "archive")).to.deep.equal([child]);
      expect(await filtered("--task", "ship", "--status", "succeeded")).to.deep.equal(["evt-ok-4", "evt-ok-3", "evt-ok-2", "evt-ok-1", "evt-ok-0"]);
      expect(await filtered("--search", "order.customer=octo")).to.deep.equal([dead]);
      expect(await filtered("--search", "evt-ok-2")).to.deep.equal(["evt-ok-2"]);
      expect(await filtered("--source", "orders", "--until", new Date(T0 + 60_000).toISOString())).to.deep.equal([dead]);
      expect(await filtered("--since", new Date(T0 + 60_003).toISOString())).to.deep.equal(["evt-ok-4", "evt-ok-3"]);
      expect(await filtered("--since", "1h")).to.deep.equal([]);

      const shown = await runCli(["events", "show", dead, "--store", where], NO_SECRET);
      expect(shown.code, shown.stderr).to.equal(0);
      const text = shown.stdout;
      expect(text).to.contain(`id:          ${dead}`).and.contain("from:        source orders").and.contain("status:      dead");
      expect(text).to.contain(`children:    ${child}`);
      expect(text).to.match(/1\. ship {2}attempt 1 .* retry\n {5}error: TypeError: carrier down\n {7}at ship \(ship\.js:3:9\)/);
      expect(text).to.match(/\d\. ship {2}attempt 2 .* dead_letter\n {5}error: TypeError: carrier still down\n {7}at ship \(ship\.js:3:9\)/);
      expect(text).to.match(/\d\. audit {2}attempt 1 .* success\n {5}emitted: child-of-dead/);
      expect(text).to.contain('"customer": "octo"');
      expect(text).to.contain('"authorization": "[redacted]"').and.contain('"x-hub-signature-256": "[redacted]"');
      expect(text).to.contain("raw body: 37 bytes");
      for (const secret of [SECRET, SIGNATURE]) expect(text).not.to.contain(secret);

      const json = await runCli(["events", "show", dead, "--json", "--store", where], NO_SECRET);
      const full = JSON.parse(json.stdout) as { payload: { headers: Record<string, string> }; rawBase64: string; runs: Array<{ startedAt: string; error?: { stack?: string } }>; children: string[] };
      expect(full.payload.headers.authorization).to.equal("[redacted]");
      expect(Buffer.from(full.rawBase64, "base64").toString()).to.equal('{"order":{"id":42,"customer":"octo"}}');
      expect(full.runs[0].startedAt).to.equal(new Date(T0 + 10).toISOString());
      expect(full.runs[0].error?.stack).to.contain("ship.js:3:9");
      expect(full.children).to.deep.equal([child]);
      expect(json.stdout).not.to.contain(SECRET);

      const childShown = await runCli(["events", "show", child, "--store", where], NO_SECRET);
      expect(childShown.stdout).to.contain(`parent:      ${dead}`).and.contain("from:        queue audit-log").and.contain('"audited": 42');
    });

    it("show: a value holding a BigInt prints with it as decimal text, --json too, bytes as base64 and what only looks like bytes as it is; terminal control characters a sender or a handler put in print escaped", async function () {
      this.timeout(60_000);
      const history = store.history!;
      history.noteEvent({ id: "big-1", origin: { kind: "queue", queue: "amounts" }, receivedAt: T0, deliveries: [{ task: "sum", queue: "amounts", messageId: "big-1" }], payload: { total: 12345678901234567890n, lookAlike: { type: "Buffer", data: [1, 2] }, bytes: Buffer.from([1, 2]) } });
      history.noteEvent({ id: "esc-1", origin: { kind: "webhook", source: "orders" }, name: "\u001b]0;owned\u0007x", receivedAt: T0 + 1, deliveries: [{ task: "ship", queue: "webhook:ship", messageId: "esc-1" }], payload: { body: "\u001b[2J\u001b[31mtext body", headers: {} } });
      history.noteRun({ eventId: "esc-1", status: "dead", run: { task: "ship", attempt: 1, startedAt: T0 + 2, durationMs: 1, outcome: "dead_letter", error: { type: "Error", message: "bad \u001b[2Jinput", stack: "Error: bad\n    at \u001b[31mred" } } });
      await history.flush();

      const shown = await runCli(["events", "show", "big-1", "--store", where], NO_SECRET);
      expect(shown.code, shown.stderr).to.equal(0);
      expect(shown.stdout).to.contain('"total": "12345678901234567890"');
      const json = await runCli(["events", "show", "big-1", "--json", "--store", where], NO_SECRET);
      expect(json.code, json.stderr).to.equal(0);
      // Bytes print as base64; an object that only looks like toJSON's form of bytes prints as it is.
      expect((JSON.parse(json.stdout) as { payload: unknown }).payload).to.deep.equal({ total: "12345678901234567890", lookAlike: { type: "Buffer", data: [1, 2] }, bytes: { base64: "AQI=" } });

      for (const args of [["events", "show", "esc-1"], ["events", "list"]]) {
        const result = await runCli([...args, "--store", where], NO_SECRET);
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stdout).not.to.match(/[\u0000-\u0008\u000b-\u001f\u007f]/);
      }
      const escaped = await runCli(["events", "show", "esc-1", "--store", where], NO_SECRET);
      expect(escaped.stdout).to.contain("\\u001b[2J\\u001b[31mtext body").and.contain("bad \\u001b[2Jinput").and.contain("\\u001b]0;owned\\u0007x");
    });

    it("replay one event: a new event linked both ways, its copy in each delivery's recorded queue; --task for one; unknown ids and tasks refused", async function () {
      this.timeout(120_000);
      const { dead } = seed(store.history!);
      await store.history!.flush();
      await noteFlows(store);

      const one = await runCli(["events", "replay", dead, "--task", "ship", "--json", "--store", where], NO_SECRET);
      expect(one.code, one.stderr).to.equal(0);
      const result = JSON.parse(one.stdout) as { id: string; replayOf: string; tasks: string[] };
      expect(result).to.deep.include({ replayOf: dead, tasks: ["ship"] });
      let claimed: Array<Awaited<ReturnType<typeof store.claim>>[number]> = [];
      await until(async () => (claimed = claimed.concat(await store.claim("webhook:ship", 10))).length >= 1, 10_000);
      const [copy] = claimed;
      expect(copy.id).to.equal(`${result.id}@ship`);
      expect(copy.attempts).to.equal(0);
      expect((copy.payload as { body: unknown }).body).to.deep.equal({ order: { id: 42, customer: "octo" } });
      expect(copy.raw?.toString()).to.equal('{"order":{"id":42,"customer":"octo"}}');
      expect(await store.claim("webhook:audit", 10)).to.deep.equal([]);
      const replay = await store.history!.get(result.id);
      expect(replay).to.deep.include({ replayOf: dead, status: "pending" });
      expect(replay!.deliveries.map((d) => [d.task, d.queue, d.messageId])).to.deep.equal([["ship", "webhook:ship", `${result.id}@ship`]]);
      expect((await store.history!.get(dead))!.replays).to.deep.equal([result.id]);

      const both = await runCli(["events", "replay", dead, "--store", where], NO_SECRET);
      expect(both.code, both.stderr).to.equal(0);
      expect(both.stdout).to.match(new RegExp(`^replayed ${dead} as \\S+ for 2 tasks (ship, audit|audit, ship) \\(run when the app runs\\)\\n$`));
      // Written by another process: this store sees it once it reads that process's write.
      let audit: unknown[] = [];
      await until(async () => (audit = audit.concat(await store.claim("webhook:audit", 10))).length >= 1, 10_000);
      expect(audit).to.have.length(1);

      const unknown = await runCli(["events", "replay", "no-such-event", "--store", where], NO_SECRET);
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.equal("error: no event with id no-such-event in the history (it may have been pruned, lost in a crash before its note was written, or never accepted)\n");
      const shownUnknown = await runCli(["events", "show", "no-such-event", "--store", where], NO_SECRET);
      expect([shownUnknown.code, shownUnknown.stderr]).to.deep.equal([1, "error: no event with id no-such-event in the history (it may have been pruned, lost in a crash before its note was written, or never accepted)\n"]);
      const wrongTask = await runCli(["events", "replay", dead, "--task", "archive", "--store", where], NO_SECRET);
      expect(wrongTask.code).to.equal(1);
      expect(wrongTask.stderr).to.match(new RegExp(`^error: cannot replay event "${dead}" to task "archive": it was not handed to that task \\(its tasks: (ship, audit|audit, ship)\\)\\n$`));
      const badCursor = await runCli(["events", "list", "--cursor", "not-a-cursor", "--store", where], NO_SECRET);
      expect(badCursor.code).to.equal(2);
      expect(badCursor.stderr).to.match(/^error: --cursor "not-a-cursor" is not one this history gave/);
    });

    it("unrouted events: listed by --status unrouted; replayed only to a task named with --task that the history knows on their source", async function () {
      this.timeout(120_000);
      seed(store.history!);
      await noteFlows(store);
      const lost = "evt-lost";
      store.history!.noteEvent({ id: lost, origin: { kind: "webhook", source: "orders" }, name: "order.archived", receivedAt: T0 + 120_000, deliveries: [], payload: { body: { order: { id: 7 } }, headers: { authorization: SECRET } }, raw: Buffer.from('{"order":{"id":7}}') });
      await store.history!.flush();

      const listed = await runCli(["events", "list", "--status", "unrouted", "--json", "--store", where], NO_SECRET);
      expect(listed.code, listed.stderr).to.equal(0);
      const { events } = JSON.parse(listed.stdout) as { events: Array<{ id: string; status: string; deliveries: unknown[] }> };
      expect(events.map((e) => [e.id, e.status, e.deliveries.length])).to.deep.equal([[lost, "unrouted", 0]]);
      const table = await runCli(["events", "list", "--status", "unrouted", "--store", where], NO_SECRET);
      expect(table.stdout).to.contain(lost).and.contain("unrouted");
      const shown = await runCli(["events", "show", lost, "--store", where], NO_SECRET);
      expect(shown.stdout).to.contain("unrouted").and.not.contain("s3cret");
      const badStatus = await runCli(["events", "list", "--status", "routed", "--store", where], NO_SECRET);
      expect(badStatus.code).to.equal(2);
      expect(badStatus.stderr).to.match(/^error: --status "routed": one of pending, succeeded, failed, dead, unrouted\n/);

      // Routing needs the tasks' code: without --task, refused, saying where it can be done.
      const bare = await runCli(["events", "replay", lost, "--store", where], NO_SECRET);
      expect(bare.code).to.equal(1);
      expect(bare.stderr).to.equal(
        `error: cannot replay event "${lost}": it was unrouted (no task took it); name the task to send it to with --task, or replay it from the running app (app.events.replay, the console), which routes it by its tasks' on and filter\n`,
      );
      // A task the history never saw on that source: perhaps misspelt, perhaps on another source.
      const unknown = await runCli(["events", "replay", lost, "--task", "shipp", "--store", where], NO_SECRET);
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.match(/^error: cannot replay event "evt-lost" to task "shipp": the history holds no event of source "orders" handed to "shipp"/);
      const dryBulk = await runCli(["events", "replay", "--status", "unrouted", "--dry-run", "--store", where], NO_SECRET);
      expect(dryBulk.stdout).to.equal("would replay 1 event (dry run: nothing queued)\n");
      const skipped = await runCli(["events", "replay", "--status", "unrouted", "--store", where], NO_SECRET);
      expect(skipped.stdout).to.equal("replaying 1 event, at most 50 a second (about 1s)\nreplayed 0 of 1 event (their tasks run them when the app runs)\n");
      expect(skipped.stderr).to.match(/^skipped evt-lost: cannot replay event "evt-lost": it was unrouted/);
      expect(await store.claim("webhook:ship", 10)).to.deep.equal([]);

      const one = await runCli(["events", "replay", lost, "--task", "ship", "--json", "--store", where], NO_SECRET);
      expect(one.code, one.stderr).to.equal(0);
      const result = JSON.parse(one.stdout) as { id: string; replayOf: string; tasks: string[] };
      expect(result).to.deep.include({ replayOf: lost, tasks: ["ship"] });
      let claimed: Array<Awaited<ReturnType<typeof store.claim>>[number]> = [];
      await until(async () => (claimed = claimed.concat(await store.claim("webhook:ship", 10))).length >= 1, 10_000);
      expect(claimed.map((c) => [c.id, c.attempts, (c.payload as { body: unknown }).body])).to.deep.equal([[result.id, 0, { order: { id: 7 } }]]);
      const replay = (await store.history!.get(result.id))!;
      expect(replay.deliveries.map((d) => [d.task, d.queue, d.messageId])).to.deep.equal([["ship", "webhook:ship", result.id]]);
      expect((await store.history!.get(lost))!).to.deep.include({ status: "unrouted", replays: [result.id] });

      const bulk = await runCli(["events", "replay", "--status", "unrouted", "--task", "ship", "--json", "--store", where], NO_SECRET);
      expect(bulk.code, bulk.stderr).to.equal(0);
      expect(JSON.parse(bulk.stdout)).to.deep.equal({ matched: 1, queued: 1, dryRun: false });
    });

    it("bulk replay by filter: a dry run counts, then paced replays of exactly the matching events, each once", async function () {
      this.timeout(60_000);
      const history = store.history!;
      for (let i = 0; i < 40; i++) {
        const id = `bulk-${String(i).padStart(2, "0")}`;
        history.noteEvent({ id, origin: { kind: "webhook", source: "hooks" }, receivedAt: Date.now() - 60_000 + i, deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: { i }, headers: {} } });
        history.noteRun({ eventId: id, status: i % 2 === 0 ? "dead" : "succeeded", run: { task: "t", attempt: 1, startedAt: Date.now(), durationMs: 1, outcome: i % 2 === 0 ? "dead_letter" : "success" } });
      }
      await history.flush();
      await recordTaskFlows(store.state(FLOW_RECORDS_NAMESPACE), [{ name: "t", queue: "webhook:t", flow: undefined }]);
      // The dead ones' letters, as the app leaves them (a replay by status dead replays the letters still held).
      for (let i = 0; i < 40; i += 2) {
        const id = `bulk-${String(i).padStart(2, "0")}`;
        await store.enqueue("webhook:t", { id, payload: { body: { i }, headers: {} }, attempts: 0, enqueuedAt: Date.now() });
      }
      for (const message of await store.claim("webhook:t", 100)) {
        await store.deadLetter({ queue: "webhook:t", task: "t", message, error: "boom", attempts: 1, diedAt: Date.now() });
      }
      // One more, handled since (its letter discarded): not replayed, though the history keeps it dead.
      await store.enqueue("webhook:t", { id: "bulk-gone", payload: { body: { i: -1 }, headers: {} }, attempts: 0, enqueuedAt: Date.now() });
      const [gone] = await store.claim("webhook:t", 1);
      await store.deadLetter({ queue: "webhook:t", task: "t", message: gone, error: "boom", attempts: 1, diedAt: Date.now() });
      expect(await store.deadLetters.purge({ id: "bulk-gone" })).to.equal(1);
      history.noteEvent({ id: "bulk-gone", origin: { kind: "webhook", source: "hooks" }, receivedAt: Date.now() - 60_000, deliveries: [{ task: "t", queue: "webhook:t", messageId: "bulk-gone" }], payload: { body: { i: -1 }, headers: {} } });
      history.noteRun({ eventId: "bulk-gone", status: "dead", run: { task: "t", attempt: 1, startedAt: Date.now(), durationMs: 1, outcome: "dead_letter" } });
      await history.flush();

      const dry = await runCli(["events", "replay", "--status", "dead", "--since", "1h", "--dry-run", "--store", where], NO_SECRET);
      expect(dry.code, dry.stderr).to.equal(0);
      expect(dry.stdout).to.equal("would replay 21 events (dry run: nothing queued)\n");
      expect(await store.depth("webhook:t")).to.equal(0);

      const started = Date.now();
      const run = await runCli(["events", "replay", "--status", "dead", "--since", "1h", "--rate", "40", "--store", where], NO_SECRET);
      const took = Date.now() - started;
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal("replaying 21 events, at most 40 a second (about 1s)\nreplayed 20 of 21 events (their tasks run them when the app runs)\n");
      expect(run.stderr).to.equal('skipped bulk-gone: cannot replay event "bulk-gone": its dead letters were replayed or discarded since\n');
      // Paced: the 20th waits until 19/40 s after the first.
      expect(took).to.be.greaterThan(450);
      const queued = await store.claim("webhook:t", 100);
      const payloads = queued.map((m) => (m.payload as { body: { i: number } }).body.i).sort((a, b) => a - b);
      expect(payloads).to.deep.equal(Array.from({ length: 20 }, (_, i) => i * 2));
      // The replays are events of their own, pending, each linked to its original.
      const replays = await history.list({ status: "pending", limit: 500 });
      expect(replays.events).to.have.length(20);
      expect(new Set(replays.events.map((e) => e.replayOf)).size).to.equal(20);

      const json = await runCli(["events", "replay", "--status", "dead", "--search", "bulk-00", "--json", "--store", where], NO_SECRET);
      expect(JSON.parse(json.stdout)).to.deep.equal({ matched: 1, queued: 1, dryRun: false });
      const none = await runCli(["events", "replay", "--status", "failed", "--store", where], NO_SECRET);
      expect(none.stdout).to.equal("no events match: nothing replayed\n");
    });
  });
}
