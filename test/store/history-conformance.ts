import { expect } from "chai";
import type { DeliveryNote, EventNote, HistoryEvent, HistoryQuery, HistoryStore, PauseStore, RunNote, RunRecord } from "../../src/store/history";
import type { Store } from "../../src/store/store";

/*
 * What every engine's event history (Store.history) and paused tasks (Store.pauses) owe the
 * app, the console and the CLI (src/store/history.ts), written against the interfaces only.
 * Each engine's test file calls describeHistoryConformance with a factory of new, unopened
 * stores with empty data.
 *
 * Rules the suite pins down, beyond the interface's comments:
 * - A delivery's status is the status of the last run noted for its task (pending before any
 *   run); its attempts, the number of runs noted for its task; its lastError, the last run's
 *   error message when that run did not succeed. An event's status is the worst of its
 *   deliveries' (dead, failed, pending, succeeded), pending when it has none; a webhook event
 *   with none is one no task took: `unrouted` (a queue's value with none waits in its queue).
 *   An event with none is found by that status, and by no task.
 * - A field search finds a number by its value (`4200.0`, `4.2e3` find 4200), a string by its text.
 * - Runs may be noted before their event (another replica's writer was slower): they show once
 *   the event is noted. A second note of a known id is ignored.
 * - Lists are ordered newest first by receivedAt, then by id (code-unit order, SQL's COLLATE
 *   "C") descending; `since` is inclusive, `until` exclusive.
 * - `replays` and `children` name the linked events still kept, oldest first.
 * - A bad query (status, limit, times, cursor, text holding U+0000) rejects with a TypeError naming
 *   the field; `get` of an id holding U+0000 finds nothing.
 */

/** Optional hooks of an engine under test. */
export interface HistoryConformanceHooks {
  /** Removes what the factory left behind (after each test). */
  cleanup?(): void | Promise<void>;
  /** A new store over the same data as `closed`, which the suite closed first (durable engines). */
  reopen?(closed: Store): Store | Promise<Store>;
  /** Another store over the same data as `open`, open at the same time (engines shared by replicas). */
  replica?(open: Store): Store | Promise<Store>;
}

/** A day ago, on the hour: recent enough for an engine that keeps a week by default. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 24 * 3_600_000;
const MINUTE = 60_000;

function webhookNote(id: string, receivedAt: number, extra: Partial<EventNote> & { tasks?: readonly string[]; source?: string; body?: unknown; headers?: Record<string, string> } = {}): EventNote {
  const { tasks = ["t1"], source = "hooks", body = { n: id }, headers = { "content-type": "application/json", "x-request-id": `req-${id}` }, ...rest } = extra;
  return {
    id,
    origin: { kind: "webhook", source },
    receivedAt,
    deliveries: deliveries(id, tasks),
    payload: { body, headers, query: {}, method: "POST", path: "/hooks", client: ["127.0.0.1", 1234], received_at: receivedAt / 1000 },
    raw: Buffer.from(JSON.stringify(body)),
    ...rest,
  };
}

function queueNote(id: string, receivedAt: number, queue: string, payload: unknown, extra: Partial<EventNote> & { tasks?: readonly string[] } = {}): EventNote {
  const { tasks = ["next"], ...rest } = extra;
  return { id, origin: { kind: "queue", queue }, receivedAt, deliveries: deliveries(id, tasks, queue), payload, ...rest };
}

function deliveries(id: string, tasks: readonly string[], queue?: string): DeliveryNote[] {
  const several = tasks.length > 1;
  return tasks.map((task) => ({ task, queue: queue === undefined ? `webhook:${task}` : several ? `${queue}@${task}` : queue, messageId: several ? `${id}@${task}` : id }));
}

function run(task: string, attempt: number, outcome: RunRecord["outcome"], extra: Partial<RunRecord> = {}): RunRecord {
  const failed = outcome !== "success";
  return {
    task,
    attempt,
    startedAt: T0 + attempt * 1_000,
    durationMs: 12.5,
    outcome,
    ...(failed ? { error: { type: "TypeError", message: `boom ${attempt}`, stack: `TypeError: boom ${attempt}\n    at handler (app.js:1:1)` } } : {}),
    ...extra,
  };
}

function runNote(eventId: string, record: RunRecord, status: RunNote["status"]): RunNote {
  return { eventId, run: record, status };
}

const ids = (page: { events: ReadonlyArray<{ id: string }> }) => page.events.map((e) => e.id);

/** A copy without keys whose value is undefined: an optional field may be left out or read back as undefined. */
function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value !== "object" || value === null || Buffer.isBuffer(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, plain(v)]));
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/** Every page of a query, walked with its cursors. */
async function allPages(history: HistoryStore, query: HistoryQuery): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await history.list({ ...query, cursor });
    pages.push(ids(page));
    if (page.next === undefined) return pages;
    expect(page.events.length, "a page with a next cursor is full").to.equal(query.limit ?? 50);
    cursor = page.next;
    if (pages.length > 1_000) throw new Error("endless pages");
  }
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function describeHistoryConformance(engineName: string, makeStore: () => Store | Promise<Store>, hooks: HistoryConformanceHooks = {}): void {
  describe(`History conformance: ${engineName}`, function () {
    this.timeout(30_000);
    let opened: Store[] = [];

    async function open(made?: Store | Promise<Store>): Promise<Store> {
      const store = await (made ?? makeStore());
      await store.open();
      opened.push(store);
      return store;
    }
    async function history(): Promise<{ store: Store; history: HistoryStore }> {
      const store = await open();
      expect(store.history, `${engineName} has a history`).to.not.equal(undefined);
      return { store, history: store.history! };
    }
    async function noted(h: HistoryStore, ...notes: Array<EventNote | RunNote>): Promise<void> {
      for (const note of notes) {
        if ("eventId" in note) h.noteRun(note);
        else h.noteEvent(note);
      }
      await h.flush();
    }
    afterEach(async () => {
      for (const store of opened.reverse()) await store.close().catch(() => undefined);
      opened = [];
      await hooks.cleanup?.();
    });

    describe("recording", () => {
      it("gives back an event as noted: origin, name, payload, raw bytes, deliveries, trace id, no runs yet", async () => {
        const { history: h } = await history();
        const body = { action: "opened", text: "héllo ✓", n: 1.5, list: [1, "two", { three: 3 }], none: null };
        const note = webhookNote("e1", T0, { name: "pull_request.opened", tasks: ["a", "b"], body, traceId: "0af7651916cd43dd8448eb211c80319c" });
        await noted(h, note);
        const got = await h.get("e1");
        expect(got).to.not.equal(undefined);
        const event = got!;
        expect(event.id).to.equal("e1");
        expect(event.origin).to.deep.equal({ kind: "webhook", source: "hooks" });
        expect(event.name).to.equal("pull_request.opened");
        expect(event.receivedAt).to.equal(T0);
        expect(event.payload).to.deep.equal(note.payload);
        expect(Buffer.isBuffer(event.raw)).to.equal(true);
        expect(event.raw!.equals(note.raw!)).to.equal(true);
        expect(event.traceId).to.equal("0af7651916cd43dd8448eb211c80319c");
        expect(plain(event.deliveries)).to.deep.equal([
          { task: "a", queue: "webhook:a", messageId: "e1@a", status: "pending", attempts: 0 },
          { task: "b", queue: "webhook:b", messageId: "e1@b", status: "pending", attempts: 0 },
        ]);
        expect(event.status).to.equal("pending");
        expect(event.runs).to.deep.equal([]);
        expect(event.replays).to.deep.equal([]);
        expect(event.children).to.deep.equal([]);
        expect(event.parentId).to.equal(undefined);
        expect(event.replayOf).to.equal(undefined);
      });

      it("keeps a queue event's value (any JSON) with no raw bytes", async () => {
        const { history: h } = await history();
        await noted(h, queueNote("q1", T0, "results", { total: 3, items: ["a", "b"], ok: true }), queueNote("q2", T0 + 1, "results", "just text"));
        const q1 = await h.get("q1");
        expect(q1!.origin).to.deep.equal({ kind: "queue", queue: "results" });
        expect(q1!.payload).to.deep.equal({ total: 3, items: ["a", "b"], ok: true });
        expect(q1!.raw).to.equal(undefined);
        expect((await h.get("q2"))!.payload).to.equal("just text");
      });

      it("keeps Buffers in a payload (a raw-parser body) and a large body, as they were", async () => {
        const { history: h } = await history();
        const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0x7f]);
        const big = { text: "é".repeat(300_000), list: Array.from({ length: 1_000 }, (_, i) => ({ i, s: `item ${i}` })) };
        await noted(h, webhookNote("bin", T0, { body: bytes }), webhookNote("big", T0 + 1, { body: big }));
        const bin = (await h.get("bin"))!;
        const body = (bin.payload as { body: unknown }).body;
        expect(Buffer.isBuffer(body)).to.equal(true);
        expect((body as Buffer).equals(bytes)).to.equal(true);
        expect(((await h.get("big"))!.payload as { body: unknown }).body).to.deep.equal(big);
      });

      it("keeps many runs of one delivery", async () => {
        const { history: h } = await history();
        const notes: RunNote[] = [];
        for (let attempt = 1; attempt <= 25; attempt++) notes.push(runNote("many", run("t1", attempt, attempt === 25 ? "dead_letter" : "retry"), attempt === 25 ? "dead" : "failed"));
        await noted(h, webhookNote("many", T0), ...notes);
        const event = (await h.get("many"))!;
        expect(event.runs.map((r) => r.attempt)).to.deep.equal(Array.from({ length: 25 }, (_, i) => i + 1));
        expect(event.deliveries[0]).to.include({ status: "dead", attempts: 25, lastError: "boom 25" });
      });

      it("resolves flush() with nothing to write", async () => {
        const { history: h } = await history();
        await h.flush();
        await h.flush();
        expect((await h.size()).events).to.equal(0);
      });

      it("keeps the payload as it was when noted, whatever a task does to the object afterwards", async () => {
        const { history: h } = await history();
        const note = webhookNote("mutable", T0, { body: { n: 1, list: [1, 2], nested: { ok: true } } });
        h.noteEvent(note);
        const payload = note.payload as { body: { n: number; list: number[]; nested: { ok: boolean } }; headers: Record<string, string> };
        payload.body.n = 2;
        payload.body.list.push(3);
        payload.body.nested.ok = false;
        delete payload.headers["x-request-id"];
        await h.flush();
        expect((await h.get("mutable"))!.payload).to.deep.equal(webhookNote("mutable", T0, { body: { n: 1, list: [1, 2], nested: { ok: true } } }).payload);
      });

      it("gives back a JSON body whose raw bytes start with a BOM as noted, found by a body field, not in the way of other searches", async () => {
        const { history: h } = await history();
        const body = { repo: "octo/b", n: 1 };
        const bom = webhookNote("bom", T0 + 1, { body, raw: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(body))]) });
        await noted(h, webhookNote("plain", T0, { body: { repo: "octo/a", n: 1 } }), bom);
        const got = (await h.get("bom"))!;
        expect(got.payload).to.deep.equal(bom.payload);
        expect(got.raw!.equals(bom.raw!)).to.equal(true);
        expect(ids(await h.list({ search: "repo=octo/a" }))).to.deep.equal(["plain"]);
        expect(ids(await h.list({ search: "repo=octo/b" }))).to.deep.equal(["bom"]);
        expect(ids(await h.list({ search: "n=1" }))).to.deep.equal(["bom", "plain"]);
      });

      it("knows no unknown id", async () => {
        const { history: h } = await history();
        await noted(h, webhookNote("e1", T0));
        expect(await h.get("nope")).to.equal(undefined);
        expect(await h.get("")).to.equal(undefined);
        // U+0000 (no engine keeps one in an id) is not found either, rather than an error.
        expect(await h.get("e1\u0000")).to.equal(undefined);
        expect(await h.get("\u0000")).to.equal(undefined);
        // Nor an id longer than any an engine keeps (a console URL of 10,000 characters).
        expect(await h.get("e".repeat(10_000))).to.equal(undefined);
      });

      it("ignores a second note of a known id", async () => {
        const { history: h } = await history();
        await noted(h, webhookNote("e1", T0, { name: "first" }), webhookNote("e1", T0 + 5, { name: "second" }));
        expect((await h.get("e1"))!.name).to.equal("first");
        expect(ids(await h.list({}))).to.deep.equal(["e1"]);
        expect((await h.size()).events).to.equal(1);
      });

      it("keeps runs in the order noted, with attempt, start, duration, outcome, error and emitted ids", async () => {
        const { history: h } = await history();
        const r1 = run("t1", 1, "retry");
        const r2 = run("t1", 2, "timeout", { error: { type: "TaskTimeoutError", message: "timed out after 50 ms" } });
        const r3 = run("t1", 3, "success", { emitted: ["child-1", "child-2"], durationMs: 3 });
        await noted(h, webhookNote("e1", T0), runNote("e1", r1, "failed"), runNote("e1", r2, "failed"), runNote("e1", r3, "succeeded"));
        const event = (await h.get("e1"))!;
        expect(plain(event.runs)).to.deep.equal([r1, r2, r3]);
        expect(event.runs[0].error!.stack).to.contain("at handler");
        expect(event.status).to.equal("succeeded");
        expect(plain(event.deliveries)).to.deep.equal([{ task: "t1", queue: "webhook:t1", messageId: "e1", status: "succeeded", attempts: 3 }]);
      });

      it("shows a failed delivery's last error, and a dead one's", async () => {
        const { history: h } = await history();
        await noted(h, webhookNote("e1", T0, { tasks: ["a", "b"] }), runNote("e1", run("a", 1, "retry"), "failed"), runNote("e1", run("b", 1, "dead_letter"), "dead"));
        const event = (await h.get("e1"))!;
        expect(event.deliveries.map((d) => [d.task, d.status, d.attempts, d.lastError])).to.deep.equal([
          ["a", "failed", 1, "boom 1"],
          ["b", "dead", 1, "boom 1"],
        ]);
        expect(event.status).to.equal("dead");
      });

      it("rolls up an event's status as the worst of its deliveries'", async () => {
        const { history: h } = await history();
        const tasks = ["a", "b"];
        await noted(
          h,
          webhookNote("s-s", T0, { tasks }),
          runNote("s-s", run("a", 1, "success"), "succeeded"),
          runNote("s-s", run("b", 1, "success"), "succeeded"),
          webhookNote("s-p", T0 + 1, { tasks }),
          runNote("s-p", run("a", 1, "success"), "succeeded"),
          webhookNote("f-p", T0 + 2, { tasks }),
          runNote("f-p", run("a", 1, "retry"), "failed"),
          webhookNote("d-f", T0 + 3, { tasks }),
          runNote("d-f", run("a", 1, "retry"), "failed"),
          runNote("d-f", run("b", 1, "dead_letter"), "dead"),
          queueNote("none", T0 + 4, "unconsumed", { v: 1 }, { tasks: [] }),
        );
        const status = async (id: string) => (await h.get(id))!.status;
        expect(await status("s-s")).to.equal("succeeded");
        expect(await status("s-p")).to.equal("pending");
        expect(await status("f-p")).to.equal("failed");
        expect(await status("d-f")).to.equal("dead");
        expect(await status("none")).to.equal("pending");
        const listed = await h.list({});
        expect(listed.events.map((e) => [e.id, e.status])).to.deep.equal([
          ["none", "pending"],
          ["d-f", "dead"],
          ["f-p", "failed"],
          ["s-p", "pending"],
          ["s-s", "succeeded"],
        ]);
      });

      it("shows runs noted before their event once the event is noted", async () => {
        const { history: h } = await history();
        await noted(h, runNote("late", run("t1", 1, "success"), "succeeded"));
        expect(await h.get("late")).to.equal(undefined);
        expect(ids(await h.list({}))).to.deep.equal([]);
        await noted(h, webhookNote("late", T0));
        const event = (await h.get("late"))!;
        expect(event.runs.length).to.equal(1);
        expect(event.status).to.equal("succeeded");
      });

      it("writes notes made in a burst, without awaiting each; flush() waits for them all", async () => {
        const { history: h } = await history();
        for (let i = 0; i < 1_000; i++) {
          const id = `b${String(i).padStart(4, "0")}`;
          h.noteEvent(webhookNote(id, T0 + i));
          h.noteRun(runNote(id, run("t1", 1, i % 2 === 0 ? "success" : "retry"), i % 2 === 0 ? "succeeded" : "failed"));
        }
        await h.flush();
        expect((await h.size()).events).to.equal(1_000);
        expect((await h.get("b0999"))!.status).to.equal("failed");
        expect((await h.get("b0998"))!.status).to.equal("succeeded");
      });
    });

    describe("links", () => {
      it("links an emitted value to the event whose run emitted it, both ways", async () => {
        const { history: h } = await history();
        await noted(
          h,
          webhookNote("p", T0),
          runNote("p", run("t1", 1, "success", { emitted: ["c1@x", "c1@y"] }), "succeeded"),
          queueNote("c1", T0 + 10, "results", { from: "p" }, { tasks: ["x", "y"], parentId: "p" }),
          queueNote("c2", T0 + 20, "results", { from: "p" }, { parentId: "p" }),
        );
        expect((await h.get("p"))!.children).to.deep.equal(["c1", "c2"]);
        const child = (await h.get("c1"))!;
        expect(child.parentId).to.equal("p");
        expect(child.deliveries.map((d) => d.messageId)).to.deep.equal(["c1@x", "c1@y"]);
        expect((await h.list({ search: "c1" })).events[0].parentId).to.equal("p");
      });

      it("links replays to their original both ways, oldest first; a replay of a replay too", async () => {
        const { history: h } = await history();
        await noted(h, webhookNote("orig", T0), webhookNote("r2", T0 + 20, { replayOf: "orig" }), webhookNote("r1", T0 + 10, { replayOf: "orig" }), webhookNote("rr", T0 + 30, { replayOf: "r1" }));
        const original = (await h.get("orig"))!;
        expect(original.replays).to.deep.equal(["r1", "r2"]);
        expect((await h.get("r1"))!.replayOf).to.equal("orig");
        expect((await h.get("r1"))!.replays).to.deep.equal(["rr"]);
        expect((await h.get("rr"))!.replayOf).to.equal("r1");
        const summary = (await h.list({ search: "r2" })).events[0];
        expect(summary.replayOf).to.equal("orig");
      });
    });

    describe("list", () => {
      async function sample(h: HistoryStore): Promise<void> {
        await noted(
          h,
          webhookNote("gh1", T0, { source: "github", tasks: ["build"], body: { repository: { full_name: "octo/repo", id: 7 }, action: "opened", draft: false } }),
          webhookNote("gh2", T0 + MINUTE, { source: "github", tasks: ["build", "notify"], body: { repository: { full_name: "octo/other", id: 8 }, action: "closed", draft: true } }),
          webhookNote("st1", T0 + 2 * MINUTE, { source: "stripe", tasks: ["bill"], body: { type: "invoice.paid", data: { amount: 4200 } }, headers: { "stripe-signature": "[redacted]", "x-request-id": "abc-123" } }),
          queueNote("q1", T0 + 3 * MINUTE, "built", { repository: { full_name: "octo/repo" }, ok: true }, { tasks: ["deploy"], parentId: "gh1" }),
          runNote("gh1", run("build", 1, "success", { emitted: ["q1"] }), "succeeded"),
          runNote("gh2", run("build", 1, "retry"), "failed"),
          runNote("gh2", run("notify", 1, "success"), "succeeded"),
          runNote("st1", run("bill", 1, "dead_letter"), "dead"),
        );
      }

      it("lists newest first, all by default", async () => {
        const { history: h } = await history();
        await sample(h);
        const page = await h.list({});
        expect(ids(page)).to.deep.equal(["q1", "st1", "gh2", "gh1"]);
        expect(page.next).to.equal(undefined);
        const gh2 = page.events[2];
        expect(gh2.origin).to.deep.equal({ kind: "webhook", source: "github" });
        expect(gh2.status).to.equal("failed");
        expect(gh2.deliveries.map((d) => [d.task, d.status, d.attempts])).to.deep.equal([
          ["build", "failed", 1],
          ["notify", "succeeded", 1],
        ]);
        expect(gh2).to.not.have.property("payload");
        expect(gh2).to.not.have.property("runs");
      });

      it("filters by source (webhook events only)", async () => {
        const { history: h } = await history();
        await sample(h);
        expect(ids(await h.list({ source: "github" }))).to.deep.equal(["gh2", "gh1"]);
        expect(ids(await h.list({ source: "stripe" }))).to.deep.equal(["st1"]);
        expect(ids(await h.list({ source: "built" }))).to.deep.equal([]);
        expect(ids(await h.list({ source: "nobody" }))).to.deep.equal([]);
      });

      it("filters by task: the events handed to it", async () => {
        const { history: h } = await history();
        await sample(h);
        expect(ids(await h.list({ task: "build" }))).to.deep.equal(["gh2", "gh1"]);
        expect(ids(await h.list({ task: "notify" }))).to.deep.equal(["gh2"]);
        expect(ids(await h.list({ task: "deploy" }))).to.deep.equal(["q1"]);
      });

      it("filters by status: any delivery in it, or with a task, that task's delivery", async () => {
        const { history: h } = await history();
        await sample(h);
        expect(ids(await h.list({ status: "succeeded" }))).to.deep.equal(["gh2", "gh1"]);
        expect(ids(await h.list({ status: "failed" }))).to.deep.equal(["gh2"]);
        expect(ids(await h.list({ status: "dead" }))).to.deep.equal(["st1"]);
        expect(ids(await h.list({ status: "pending" }))).to.deep.equal(["q1"]);
        expect(ids(await h.list({ status: "succeeded", task: "build" }))).to.deep.equal(["gh1"]);
        expect(ids(await h.list({ status: "succeeded", task: "notify" }))).to.deep.equal(["gh2"]);
        expect(ids(await h.list({ status: "failed", task: "notify" }))).to.deep.equal([]);
      });

      it("keeps a source's event no task took as unrouted: no deliveries, found by status unrouted only", async () => {
        const { history: h } = await history();
        await sample(h);
        await noted(
          h,
          webhookNote("un1", T0 + 4 * MINUTE, { source: "github", tasks: [], body: { action: "labeled", repository: { full_name: "octo/repo" } } }),
          // A queue's value no task consumes waits in its queue: pending, not unrouted.
          queueNote("q0", T0 + 5 * MINUTE, "orphans", { ok: true }, { tasks: [] }),
        );
        const all = await h.list({});
        expect(ids(all)).to.deep.equal(["q0", "un1", "q1", "st1", "gh2", "gh1"]);
        expect(all.events.map((e) => e.status)).to.deep.equal(["pending", "unrouted", "pending", "dead", "failed", "succeeded"]);
        expect(ids(await h.list({ status: "unrouted" }))).to.deep.equal(["un1"]);
        expect(ids(await h.list({ status: "unrouted", source: "github" }))).to.deep.equal(["un1"]);
        expect(ids(await h.list({ status: "unrouted", source: "stripe" }))).to.deep.equal([]);
        // No task took it: no task's filter finds it, with or without a status.
        expect(ids(await h.list({ status: "unrouted", task: "build" }))).to.deep.equal([]);
        expect(ids(await h.list({ task: "build" }))).to.deep.equal(["gh2", "gh1"]);
        // The queue's value is found by the status it shows.
        expect(ids(await h.list({ status: "pending" }))).to.deep.equal(["q0", "q1"]);
        expect(ids(await h.list({ search: "repository.full_name=octo/repo", status: "unrouted" }))).to.deep.equal(["un1"]);
        expect(ids(await h.list({ search: "req-un1" }))).to.deep.equal(["un1"]);
        const event = await h.get("un1");
        expect(event?.status).to.equal("unrouted");
        expect(event?.deliveries).to.deep.equal([]);
        expect(event?.runs).to.deep.equal([]);
        const payload = event?.payload as { body: unknown; headers: Record<string, string> };
        expect(payload.body).to.deep.equal({ action: "labeled", repository: { full_name: "octo/repo" } });
        expect(payload.headers["x-request-id"]).to.equal("req-un1");
        expect(event?.raw?.toString()).to.equal(JSON.stringify({ action: "labeled", repository: { full_name: "octo/repo" } }));
      });

      it("finds a queue's value no task consumes by the status it shows, pending, and by no task", async () => {
        const { history: h } = await history();
        await sample(h);
        await noted(h, queueNote("q0", T0 + 5 * MINUTE, "orphans", { ok: true }, { tasks: [] }));
        const [q0] = (await h.list({ limit: 1 })).events;
        expect(q0.id).to.equal("q0");
        expect(q0.status).to.equal("pending");
        expect((await h.get("q0"))?.status).to.equal("pending");
        expect(ids(await h.list({ status: "pending" }))).to.deep.equal(["q0", "q1"]);
        expect(ids(await h.list({ status: "pending", since: T0 + 4 * MINUTE }))).to.deep.equal(["q0"]);
        for (const status of ["succeeded", "failed", "dead", "unrouted"] as const) expect(ids(await h.list({ status, since: T0 + 4 * MINUTE })), status).to.deep.equal([]);
        expect(ids(await h.list({ status: "pending", task: "deploy" }))).to.deep.equal(["q1"]);
        expect(ids(await h.list({ task: "orphans" }))).to.deep.equal([]);
      });

      it("searches a numeric body field by value: 4200.0 and 4.2e3 find 4200, 1e2 finds 100, as written or as a number", async () => {
        const { history: h } = await history();
        const raw = '{"amount": 4200.0, "ratio": 1e2, "count": 7, "label": "4200.0", "flag": true}';
        const body = JSON.parse(raw) as unknown;
        await noted(h, { ...webhookNote("n1", T0, { body }), raw: Buffer.from(raw) }, queueNote("n2", T0 + 1, "totals", { amount: 4200, ratio: 100 }));
        for (const search of ["amount=4200", "amount=4200.0", "amount=4.2e3", "amount=4200.00", "ratio=1e2", "ratio=100", "ratio=100.0", "ratio=1E+2"]) {
          expect(ids(await h.list({ search })), search).to.deep.equal(["n2", "n1"]);
        }
        expect(ids(await h.list({ search: "count=7.0" }))).to.deep.equal(["n1"]);
        // A string equals the text as it is; a number never equals a value that is not one.
        expect(ids(await h.list({ search: "label=4200.0" }))).to.deep.equal(["n1"]);
        expect(ids(await h.list({ search: "label=4200" }))).to.deep.equal([]);
        expect(ids(await h.list({ search: "amount=4201" }))).to.deep.equal([]);
        expect(ids(await h.list({ search: "amount=4200x" }))).to.deep.equal([]);
        expect(ids(await h.list({ search: "amount=\"4200\"" }))).to.deep.equal([]);
        expect(ids(await h.list({ search: "flag=true" }))).to.deep.equal(["n1"]);
        // Only as JSON writes it: no spaces around a value.
        for (const search of ["count= 7", "count=7 ", "flag= true"]) expect(ids(await h.list({ search })), search).to.deep.equal([]);
      });

      it("finds a number too large for a double by the same text on every engine, and not a null", async () => {
        const { history: h } = await history();
        const huge = '{"x": 1e400}';
        const none = '{"x": null}';
        await noted(h, { ...webhookNote("big", T0, { body: JSON.parse(huge) as unknown }), raw: Buffer.from(huge) }, { ...webhookNote("nul", T0 + 1, { body: JSON.parse(none) as unknown }), raw: Buffer.from(none) });
        expect(ids(await h.list({ search: "x=1e400" }))).to.deep.equal(["big"]);
        expect(ids(await h.list({ search: "x=null" }))).to.deep.equal(["nul"]);
        // A path follows the body's own fields only, as JSON has them.
        for (const search of ["x.length=1", "__proto__={}", "x.constructor=null"]) expect(ids(await h.list({ search })), search).to.deep.equal([]);
        // Past what any engine holds as a number: text, found nowhere (and no database error).
        for (const search of ["x=1e1000000", "x=1e-16384", `x=${"9".repeat(2_000)}`]) expect(ids(await h.list({ search })), search.slice(0, 20)).to.deep.equal([]);
      });

      it("filters by time: since inclusive, until exclusive", async () => {
        const { history: h } = await history();
        await sample(h);
        expect(ids(await h.list({ since: T0 + MINUTE }))).to.deep.equal(["q1", "st1", "gh2"]);
        expect(ids(await h.list({ until: T0 + MINUTE }))).to.deep.equal(["gh1"]);
        expect(ids(await h.list({ since: T0 + MINUTE, until: T0 + 3 * MINUTE }))).to.deep.equal(["st1", "gh2"]);
        expect(ids(await h.list({ since: T0 + 10 * MINUTE }))).to.deep.equal([]);
      });

      it("searches an event id, a header value, or a JSON body field (path=value)", async () => {
        const { history: h } = await history();
        await sample(h);
        expect(ids(await h.list({ search: "gh2" }))).to.deep.equal(["gh2"]);
        expect(ids(await h.list({ search: "q1" }))).to.deep.equal(["q1"]);
        expect(ids(await h.list({ search: "abc-123" }))).to.deep.equal(["st1"]);
        expect(ids(await h.list({ search: "req-gh1" }))).to.deep.equal(["gh1"]);
        expect(ids(await h.list({ search: "repository.full_name=octo/repo" }))).to.deep.equal(["q1", "gh1"]);
        expect(ids(await h.list({ search: "repository.full_name=octo/repo", source: "github" }))).to.deep.equal(["gh1"]);
        expect(ids(await h.list({ search: "repository.id=8" }))).to.deep.equal(["gh2"]);
        expect(ids(await h.list({ search: "data.amount=4200" }))).to.deep.equal(["st1"]);
        expect(ids(await h.list({ search: "draft=true" }))).to.deep.equal(["gh2"]);
        expect(ids(await h.list({ search: "action=opened" }))).to.deep.equal(["gh1"]);
        expect(ids(await h.list({ search: "ok=true" }))).to.deep.equal(["q1"]);
        // Partial values, other fields, paths that lead nowhere: no match.
        expect(ids(await h.list({ search: "repository.full_name=octo" }))).to.deep.equal([]);
        expect(ids(await h.list({ search: "repository.missing.deeper=1" }))).to.deep.equal([]);
        expect(ids(await h.list({ search: "gh" }))).to.deep.equal([]);
        expect(ids(await h.list({ search: "POST" }))).to.deep.equal([]);
      });

      it("takes limit, 50 by default", async () => {
        const { history: h } = await history();
        for (let i = 0; i < 60; i++) h.noteEvent(webhookNote(`e${String(i).padStart(2, "0")}`, T0 + i));
        await h.flush();
        const first = await h.list({});
        expect(first.events.length).to.equal(50);
        expect(first.events[0].id).to.equal("e59");
        expect(first.next).to.be.a("string");
        expect((await h.list({ limit: 7 })).events.length).to.equal(7);
        const exact = await h.list({ limit: 60 });
        expect(exact.events.length).to.equal(60);
        expect(exact.next).to.equal(undefined);
      });

      it("pages newest first with cursors: no duplicate, no gap, events at the same time included", async () => {
        const { history: h } = await history();
        const all: Array<{ id: string; at: number }> = [];
        for (let i = 0; i < 23; i++) {
          // Groups of three events share a time: the cursor must split them correctly.
          const at = T0 + Math.floor(i / 3) * 1_000;
          const id = `p${String(i).padStart(2, "0")}`;
          all.push({ id, at });
          h.noteEvent(webhookNote(id, at, { tasks: [i % 2 === 0 ? "even" : "odd"] }));
        }
        await h.flush();
        const expected = all.sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1)).map((e) => e.id);
        for (const limit of [1, 2, 3, 5, 22, 23]) {
          const pages = await allPages(h, { limit });
          expect(pages.flat(), `limit ${limit}`).to.deep.equal(expected);
        }
        // A cursor walk of a filtered list.
        const evens = await allPages(h, { limit: 4, task: "even" });
        expect(evens.flat()).to.deep.equal(expected.filter((id) => Number(id.slice(1)) % 2 === 0));
      });

      it("keeps a walk steady while newer events arrive between pages", async () => {
        const { history: h } = await history();
        for (let i = 0; i < 10; i++) h.noteEvent(webhookNote(`w${i}`, T0 + i));
        await h.flush();
        const first = await h.list({ limit: 4 });
        expect(ids(first)).to.deep.equal(["w9", "w8", "w7", "w6"]);
        await noted(h, webhookNote("newer", T0 + 100));
        const second = await h.list({ limit: 4, cursor: first.next });
        expect(ids(second)).to.deep.equal(["w5", "w4", "w3", "w2"]);
        const third = await h.list({ limit: 4, cursor: second.next });
        expect(ids(third)).to.deep.equal(["w1", "w0"]);
        expect(third.next).to.equal(undefined);
      });

      it("refuses a bad query with an error naming the field", async () => {
        const { history: h } = await history();
        await noted(h, webhookNote("e1", T0));
        const cases: Array<[HistoryQuery, RegExp]> = [
          [{ limit: 0 }, /limit/],
          [{ limit: 501 }, /limit/],
          [{ limit: 1.5 }, /limit/],
          [{ status: "bogus" as never }, /status.*pending.*succeeded.*failed.*dead.*unrouted/],
          [{ since: Number.NaN }, /since/],
          [{ until: "yesterday" as never }, /until/],
          [{ cursor: "not-a-cursor" }, /cursor/],
          [{ source: "" }, /source/],
          [{ sources: "hooks" } as never, /"sources" is not a history filter \(did you mean "source"\?\)/],
          // U+0000: no text kept holds one (PostgreSQL refuses it), refused alike everywhere.
          [{ search: "e1\u0000" }, /search.*U\+0000/],
          [{ search: "n=\u0000" }, /search.*U\+0000/],
          [{ source: "hooks\u0000" }, /source.*U\+0000/],
          [{ task: "\u0000" }, /task.*U\+0000/],
          // A cursor's form ([receivedAt, id] as base64url JSON) with U+0000 in its id.
          [{ cursor: Buffer.from(JSON.stringify([T0, "e1\u0000"])).toString("base64url") }, /cursor/],
        ];
        for (const [query, message] of cases) {
          const error = await rejection(h.list(query));
          expect(error, JSON.stringify(query)).to.be.instanceOf(TypeError);
          expect((error as Error).message, JSON.stringify(query)).to.match(message);
        }
      });
    });

    describe("activity", () => {
      it("counts each task's deliveries per source and time bucket, by current status", async () => {
        const { history: h } = await history();
        const HOUR = 60 * MINUTE;
        const base = Math.floor(T0 / HOUR) * HOUR;
        await noted(
          h,
          webhookNote("old", base - HOUR, { tasks: ["a"] }),
          webhookNote("x1", base + 1, { tasks: ["a", "b"] }),
          webhookNote("x2", base + 2, { tasks: ["a"] }),
          webhookNote("x3", base + HOUR + 5, { tasks: ["a"] }),
          queueNote("q1", base + 3, "out", { v: 1 }, { tasks: ["c"] }),
          runNote("x1", run("a", 1, "success"), "succeeded"),
          runNote("x1", run("b", 1, "dead_letter"), "dead"),
          runNote("x2", run("a", 1, "retry"), "failed"),
          runNote("x3", run("a", 1, "success"), "succeeded"),
        );
        const rows = await h.activity(base, HOUR);
        const key = (r: { bucketStart: number; task: string }) => `${r.bucketStart}/${r.task}`;
        const sorted = [...rows].sort((x, y) => (key(x) < key(y) ? -1 : 1));
        expect(plain(sorted)).to.deep.equal([
          { task: "a", source: "hooks", bucketStart: base, received: 2, succeeded: 1, failed: 1, dead: 0, pending: 0 },
          { task: "b", source: "hooks", bucketStart: base, received: 1, succeeded: 0, failed: 0, dead: 1, pending: 0 },
          { task: "c", bucketStart: base, received: 1, succeeded: 0, failed: 0, dead: 0, pending: 1 },
          { task: "a", source: "hooks", bucketStart: base + HOUR, received: 1, succeeded: 1, failed: 0, dead: 0, pending: 0 },
        ].sort((x, y) => (key(x) < key(y) ? -1 : 1)));
        expect(await h.activity(base + 2 * HOUR, HOUR)).to.deep.equal([]);
      });
    });

    describe("pruning and size", () => {
      it("prunes by age: events received before the cut go, with their runs", async () => {
        const { history: h } = await history();
        for (let i = 0; i < 10; i++) {
          h.noteEvent(webhookNote(`a${i}`, T0 + i * MINUTE));
          h.noteRun(runNote(`a${i}`, run("t1", 1, "success"), "succeeded"));
        }
        await h.flush();
        expect(await h.prune(T0 + 4 * MINUTE)).to.equal(4);
        expect(ids(await h.list({}))).to.deep.equal(["a9", "a8", "a7", "a6", "a5", "a4"]);
        expect(await h.get("a3")).to.equal(undefined);
        expect((await h.get("a4"))!.runs.length).to.equal(1);
        expect((await h.size()).events).to.equal(6);
        expect(await h.prune(T0 + 4 * MINUTE)).to.equal(0);
      });

      it("prunes the oldest beyond maxEvents, after the age cut", async () => {
        const { history: h } = await history();
        for (let i = 0; i < 10; i++) h.noteEvent(webhookNote(`m${i}`, T0 + i * MINUTE));
        await h.flush();
        expect(await h.prune(T0 - MINUTE, 7)).to.equal(3);
        expect(ids(await h.list({}))).to.deep.equal(["m9", "m8", "m7", "m6", "m5", "m4", "m3"]);
        expect(await h.prune(T0 + 5 * MINUTE, 3)).to.equal(4);
        expect(ids(await h.list({}))).to.deep.equal(["m9", "m8", "m7"]);
        expect(await h.prune(0, 0)).to.equal(3);
        expect((await h.size()).events).to.equal(0);
      });

      it("drops pruned replays and children from their original's and parent's links", async () => {
        const { history: h } = await history();
        await noted(h, webhookNote("orig", T0 + 10 * MINUTE), webhookNote("r-old", T0, { replayOf: "orig" }), queueNote("c-old", T0 + 1, "q", {}, { parentId: "orig" }), webhookNote("r-new", T0 + 11 * MINUTE, { replayOf: "orig" }));
        expect((await h.get("orig"))!.replays).to.deep.equal(["r-old", "r-new"]);
        expect(await h.prune(T0 + MINUTE)).to.equal(2);
        const original = (await h.get("orig"))!;
        expect(original.replays).to.deep.equal(["r-new"]);
        expect(original.children).to.deep.equal([]);
      });

      it("tells its size: events kept and bytes (growing with them)", async () => {
        const { history: h } = await history();
        const empty = await h.size();
        expect(empty.events).to.equal(0);
        for (let i = 0; i < 50; i++) h.noteEvent(webhookNote(`s${i}`, T0 + i, { body: { text: "x".repeat(1_000), i } }));
        await h.flush();
        const some = await h.size();
        expect(some.events).to.equal(50);
        expect(some.bytes).to.be.greaterThan(empty.bytes);
        expect(some.bytes, "50 events of 1 KB").to.be.greaterThan(50 * 1_000);
      });
    });

    describe("pauses", () => {
      async function pauses(): Promise<PauseStore> {
        const store = await open();
        expect(store.pauses, `${engineName} keeps pauses`).to.not.equal(undefined);
        return store.pauses!;
      }

      it("pauses and resumes tasks by name", async () => {
        const p = await pauses();
        expect([...(await p.paused())]).to.deep.equal([]);
        await p.setPaused("a", true);
        await p.setPaused("b", true);
        await p.setPaused("a", true);
        expect([...(await p.paused())].sort()).to.deep.equal(["a", "b"]);
        await p.setPaused("a", false);
        await p.setPaused("never-paused", false);
        expect([...(await p.paused())]).to.deep.equal(["b"]);
      });

      it("tells watchers of a change until they unsubscribe", async () => {
        const p = await pauses();
        let calls = 0;
        const stop = p.watch(() => calls++);
        await p.setPaused("a", true);
        await waitFor(() => calls >= 1, "a watcher told of a pause");
        const seen = calls;
        await p.setPaused("a", false);
        await waitFor(() => calls > seen, "a watcher told of a resume");
        stop();
        const after = calls;
        await p.setPaused("a", true);
        await new Promise((r) => setTimeout(r, 200));
        expect(calls).to.equal(after);
      });
    });

    if (hooks.reopen !== undefined) {
      const reopen = hooks.reopen;
      describe("durability", () => {
        it("keeps the history and the pauses across a restart", async () => {
          const { store, history: h } = await history();
          await noted(h, webhookNote("kept", T0, { tasks: ["a", "b"] }), runNote("kept", run("a", 1, "retry"), "failed"), runNote("kept", run("a", 2, "success", { emitted: ["c@x"] }), "succeeded"), queueNote("c", T0 + 5, "q", { v: [1, 2] }, { parentId: "kept" }), webhookNote("again", T0 + 9, { replayOf: "kept" }));
          await store.pauses!.setPaused("b", true);
          const before: HistoryEvent = (await h.get("kept"))!;
          await store.close();
          opened = opened.filter((s) => s !== store);
          const again = await open(reopen(store));
          expect(plain(await again.history!.get("kept"))).to.deep.equal(plain(before));
          expect(ids(await again.history!.list({}))).to.deep.equal(["again", "c", "kept"]);
          expect([...(await again.pauses!.paused())]).to.deep.equal(["b"]);
        });

        it("keeps an unrouted event unrouted across a restart", async () => {
          const { store, history: h } = await history();
          await noted(h, webhookNote("lost", T0, { tasks: [] }), webhookNote("taken", T0 + 1));
          await store.close();
          opened = opened.filter((s) => s !== store);
          const again = await open(reopen(store));
          expect(ids(await again.history!.list({ status: "unrouted" }))).to.deep.equal(["lost"]);
          expect((await again.history!.get("lost"))?.status).to.equal("unrouted");
        });
      });
    }

    if (hooks.replica !== undefined) {
      const replica = hooks.replica;
      describe("replicas", () => {
        it("shows one replica's events and runs to another", async () => {
          const { store, history: h } = await history();
          const other = await open(replica(store));
          await noted(h, webhookNote("shared", T0));
          // The run comes from the other replica, which claimed the event.
          other.history!.noteRun(runNote("shared", run("t1", 1, "success"), "succeeded"));
          await other.history!.flush();
          const seen = (await other.history!.get("shared"))!;
          expect(seen.status).to.equal("succeeded");
          expect(ids(await other.history!.list({ status: "succeeded" }))).to.deep.equal(["shared"]);
          expect((await h.get("shared"))!.runs.length).to.equal(1);
        });

        it("tells every replica of a pause and a resume", async () => {
          const { store } = await history();
          const other = await open(replica(store));
          let calls = 0;
          const stop = other.pauses!.watch(() => calls++);
          try {
            await store.pauses!.setPaused("a", true);
            await waitFor(() => calls >= 1, "the other replica told of the pause");
            expect([...(await other.pauses!.paused())]).to.deep.equal(["a"]);
            const seen = calls;
            await store.pauses!.setPaused("a", false);
            await waitFor(() => calls > seen, "the other replica told of the resume");
            expect([...(await other.pauses!.paused())]).to.deep.equal([]);
          } finally {
            stop();
          }
        });
      });
    }
  });
}
