import { expect } from "chai";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { MemoryStore } from "../../../src/store/memory/memory-store";
import { MemoryHistory } from "../../../src/store/memory/memory-history";
import { HistoryLog, EVENT_RECORD, RUN_RECORD } from "../../../src/store/memory/history-log";
import { RecordReader, RecordWriter } from "../../../src/store/memory/record-bytes";
import { readPlain, writePlain } from "../../../src/store/memory/plain-bytes";
import type { RunNote } from "../../../src/store/history";

describe("memory history: record bytes", () => {
  it("gives back every string exactly: Latin-1, wide, lone surrogates, U+0000, empty, short and long, and null", () => {
    const strings = ["", "a", "caf\u00e9", "\u00ff\u0000x", "\ud83d\ude00", "lone \ud800 high", "lone \udc00 low", "x".repeat(64), "\u00e9".repeat(65), `${"y".repeat(100)}\u4e2d`, `${"z".repeat(100)}\ud800`];
    const writer = new RecordWriter();
    for (const s of strings) writer.string(s);
    writer.string(null);
    writer.f64(-0);
    writer.f64(Number.NaN);
    writer.f64(1.5e300);
    const reader = new RecordReader(writer.bytes(), 0);
    for (const s of strings) expect(reader.string()).to.equal(s);
    expect(reader.string()).to.equal(null);
    expect(Object.is(reader.f64(), -0)).to.equal(true);
    expect(Number.isNaN(reader.f64())).to.equal(true);
    expect(reader.f64()).to.equal(1.5e300);
    expect(reader.at).to.equal(writer.bytes().length);
  });

  it("grows past its first buffer without losing what it wrote", () => {
    const writer = new RecordWriter();
    const big = "\u4e2d".repeat(100_000);
    writer.string("before");
    writer.string(big);
    writer.u32(7);
    const reader = new RecordReader(writer.bytes(), 0);
    expect(reader.string()).to.equal("before");
    expect(reader.string()).to.equal(big);
    expect(reader.u32()).to.equal(7);
  });

  it("writes plain data exactly and refuses what is not (a Date, -0, a hole, a class instance, 65 levels)", () => {
    const writer = new RecordWriter();
    const proto = JSON.parse('{"__proto__": {"own": true}, "list": [1, "two", null, true, {"deep": []}], "missing": null}') as Record<string, unknown>;
    const value = { ...{ a: undefined, b: "\ud800" }, proto, n: -1.25 };
    expect(writePlain(writer, value)).to.equal(true);
    const back = readPlain(new RecordReader(writer.bytes(), 0)) as Record<string, unknown>;
    expect(back).to.deep.equal(value);
    expect(Object.prototype.hasOwnProperty.call(back, "a")).to.equal(true);
    expect(Object.prototype.hasOwnProperty.call(back.proto, "__proto__")).to.equal(true);
    let deep: unknown = "leaf";
    for (let i = 0; i < 65; i++) deep = { d: deep };
    class Point {
      x = 1;
    }
    // eslint-disable-next-line no-sparse-arrays
    for (const refused of [new Date(0), -0, [1, , 3], [undefined], new Point(), deep, Object.freeze({ a: 1 }), () => 1, 1n]) {
      writer.reset();
      expect(writePlain(writer, refused), String(refused)).to.equal(false);
    }
  });
});

describe("memory history: the log", () => {
  const record = (kind: number, bodyBytes: number): RecordWriter => {
    const writer = new RecordWriter();
    writer.u8(kind);
    writer.u32(bodyBytes);
    for (let i = 0; i < bodyBytes; i++) writer.u8(0);
    return writer;
  };
  const event = (): RecordWriter => record(EVENT_RECORD, 1);

  it("drops its oldest segment once past a bound, never the newest, and reuses emptied buffers", () => {
    const log = new HistoryLog({ maxEvents: 100, maxRuns: 1_000, maxBytes: 1e9 });
    for (let i = 0; i < 10_000; i++) log.append(EVENT_RECORD, event());
    expect(log.events).to.be.within(100, 110);
    expect(log.segments.length).to.be.at.most(11);
    const run = record(RUN_RECORD, 1);
    for (let i = 0; i < 5_000; i++) log.append(RUN_RECORD, run);
    expect(log.runs).to.be.within(1_000, 1_100);
    // A record larger than the bound in bytes: alone in its segment, the others gone.
    const small = new HistoryLog({ maxEvents: 100, maxRuns: 1_000, maxBytes: 10_000 });
    for (let i = 0; i < 50; i++) small.append(EVENT_RECORD, event());
    small.append(EVENT_RECORD, record(EVENT_RECORD, 50_000));
    expect(small.segments.length).to.equal(1);
    expect(small.events).to.equal(1);
  });

  it("keeps the bytes it holds flat under a steady flow of webhooks, and frees them when pruned", async () => {
    const history = new MemoryHistory(1_000, 64 * 1024 * 1024);
    const body = Buffer.from(JSON.stringify({ action: "opened", number: 1, text: "x".repeat(300) }));
    const note = (i: number) => {
      const id = `w${String(i).padStart(8, "0")}`;
      history.noteEvent({ id, origin: { kind: "webhook", source: "s" }, receivedAt: 1_000 + i, deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: JSON.parse(body.toString()) as unknown, headers: { "content-type": "application/json" }, method: "POST" }, raw: body, bodyFromRaw: true });
      const run: RunNote = { eventId: id, run: { task: "t", attempt: 1, startedAt: 1_000 + i, durationMs: 0.5, outcome: "success" }, status: "succeeded" };
      history.noteRun(run);
    };
    for (let i = 0; i < 5_000; i++) note(i);
    const first = await history.size();
    for (let i = 5_000; i < 50_000; i++) note(i);
    const later = await history.size();
    expect(later.events).to.be.within(1_000, 1_100);
    expect(later.bytes).to.be.below(first.bytes * 1.2);
    const newest = await history.get("w00049999");
    expect(newest!.payload).to.deep.equal({ body: JSON.parse(body.toString()) as unknown, headers: { "content-type": "application/json" }, method: "POST" });
    expect(newest!.runs).to.have.length(1);
    expect(await history.prune(Number.MAX_SAFE_INTEGER)).to.equal(later.events);
    const pruned = await history.size();
    expect(pruned.events).to.equal(0);
    // The newest segment stays (it is written to); the others went.
    expect(pruned.bytes).to.be.below(later.bytes / 5);
  });

  it("keeps a run with fields it does not write as bytes (an unknown outcome, a field of its own) as a copy, and one whose error message has a lone surrogate exactly", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      store.history.noteEvent({ id: "e", origin: { kind: "queue", queue: "q" }, receivedAt: 1, deliveries: [{ task: "t", queue: "q", messageId: "e" }], payload: 1 });
      const odd = { task: "t", attempt: 1, startedAt: 2, durationMs: 0.5, outcome: "later" as unknown as "success", extra: { a: 1 } };
      store.history.noteRun({ eventId: "e", run: odd, status: "succeeded" });
      const error = { type: "Error", message: "bad \ud800 text", stack: "Error: bad\n    at x" };
      store.history.noteRun({ eventId: "e", run: { task: "t", attempt: 2, startedAt: 3, durationMs: 1, outcome: "retry", error, emitted: ["c1"] }, status: "failed" });
      const runs = (await store.history.get("e"))!.runs;
      expect(runs).to.have.length(2);
      expect(runs[0]).to.deep.equal(odd);
      expect(runs[1]).to.deep.equal({ task: "t", attempt: 2, startedAt: 3, durationMs: 1, outcome: "retry", error, emitted: ["c1"] });
      expect((await store.history.list({})).events[0]!.deliveries[0]).to.deep.include({ status: "failed", attempts: 2, lastError: "bad \ud800 text" });
    } finally {
      await store.close();
    }
  });
});

describe("memory history: the newest event stays", () => {
  it("keeps an event larger than the bytes bound when its runs are noted after it", async () => {
    const history = new MemoryHistory(10_000, 100_000);
    history.noteEvent({ id: "small", origin: { kind: "queue", queue: "q" }, receivedAt: 1_000, deliveries: [], payload: 1 });
    const raw = Buffer.from(JSON.stringify({ text: "x".repeat(300_000) }));
    history.noteEvent({ id: "huge", origin: { kind: "webhook", source: "s" }, receivedAt: 2_000, deliveries: [{ task: "t", queue: "webhook:t", messageId: "huge" }], payload: { headers: {} }, raw });
    // Its run lands in a segment of its own (the event's is full): it must not push the event out.
    history.noteRun({ eventId: "huge", run: { task: "t", attempt: 1, startedAt: 2_001, durationMs: 1, outcome: "retry", error: { type: "Error", message: "boom" } }, status: "failed" });
    history.noteRun({ eventId: "huge", run: { task: "t", attempt: 2, startedAt: 2_002, durationMs: 1, outcome: "success" }, status: "succeeded" });
    const huge = await history.get("huge");
    expect(huge?.raw?.length).to.equal(raw.length);
    expect(huge!.runs.map((r) => r.attempt)).to.deep.equal([1, 2]);
    expect(await history.get("small")).to.equal(undefined);
    // Runs that alone pass the bound still go, and the event with them.
    const error = { type: "Error", message: "boom", stack: "y".repeat(20_000) };
    for (let i = 0; i < 20; i++) history.noteRun({ eventId: "huge", run: { task: "t", attempt: 3 + i, startedAt: 2_003 + i, durationMs: 1, outcome: "retry", error }, status: "failed" });
    expect((await history.size()).bytes).to.be.below(raw.length + 100_000);
    // A newer event, however small, takes its place: then it goes.
    history.noteEvent({ id: "next", origin: { kind: "queue", queue: "q" }, receivedAt: 3_000, deliveries: [], payload: 2 });
    expect(await history.get("huge")).to.equal(undefined);
    expect((await history.size()).events).to.equal(1);
  });
});

describe("memory history: pruning", () => {
  const queued = (id: string, receivedAt: number) => ({ id, origin: { kind: "queue" as const, queue: "q" }, receivedAt, deliveries: [{ task: "t", queue: "q", messageId: id }], payload: { id } });
  const ran = (eventId: string, startedAt: number): RunNote => ({ eventId, run: { task: "t", attempt: 1, startedAt, durationMs: 1, outcome: "success" }, status: "succeeded" });

  it("does not bring a pruned event back from a repeat of its id noted in a later segment, and shows one noted after the prune", async () => {
    // Segments of ten events: x and nine others fill the first, x's repeat opens the second.
    const history = new MemoryHistory(100);
    history.noteEvent(queued("x", 1));
    history.noteRun(ran("x", 1));
    for (let i = 0; i < 9; i++) history.noteEvent(queued(`old${i}`, 2 + i));
    history.noteEvent(queued("x", 20));
    for (let i = 0; i < 3; i++) history.noteEvent(queued(`new${i}`, 100 + i));
    // After its last record, before the prune: pruned with it too.
    history.noteRun(ran("x", 21));
    expect((await history.get("x"))!.receivedAt).to.equal(1);
    expect(await history.prune(50)).to.equal(10);
    expect((await history.list({})).events.map((e) => e.id)).to.deep.equal(["new2", "new1", "new0"]);
    expect(await history.get("x")).to.equal(undefined);
    // Noted again after the prune: a new event, without the runs pruned with the old one.
    history.noteEvent(queued("x", 200));
    const again = await history.get("x");
    expect(again!.receivedAt).to.equal(200);
    expect(again!.runs).to.deep.equal([]);
    expect((await history.size()).events).to.equal(4);
  });

  it("keeps the runs of an event it holds that were noted before it, in a segment of events pruned", async () => {
    const history = new MemoryHistory(100);
    // The run comes first (another writer was quicker), then ten old events fill the first segment.
    history.noteRun(ran("kept", 100));
    for (let i = 0; i < 10; i++) history.noteEvent(queued(`old${i}`, 1 + i));
    history.noteEvent(queued("kept", 100));
    expect((await history.get("kept"))!.runs).to.have.length(1);
    expect(await history.prune(50)).to.equal(10);
    expect((await history.get("kept"))!.runs).to.have.length(1);
    // The first segment goes with its old events once the kept one's run no longer holds it: pruned too.
    expect(await history.prune(150)).to.equal(1);
    expect((await history.size()).events).to.equal(0);
  });
});

describe("memory history: memory freed", () => {
  it("lets a dropped segment go, with the values it kept beside its records, though a read indexed it before", async () => {
    // A full collection, to see what is still reachable (the flag exposes gc to new contexts).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const history = new MemoryHistory(10);
    const log = (history as unknown as { readonly log: HistoryLog }).log;
    // Segments of one event each; a Date is kept beside the record, as an object.
    const note = (id: string, receivedAt: number) => history.noteEvent({ id, origin: { kind: "queue", queue: "q" }, receivedAt, deliveries: [], payload: { at: new Date(receivedAt), text: "x".repeat(10_000) } });
    note("first", 1);
    const first = new WeakRef(log.segments[0]!);
    expect(first.deref()!.aside!.size).to.equal(1);
    // Read: the index made for it holds the segment until the log changes.
    expect(await history.get("first")).not.to.equal(undefined);
    for (let i = 0; i < 20; i++) note(`e${i}`, 2 + i);
    expect(log.segments).not.to.include(first.deref());
    // No read since: what went must not be held by the index made before.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(first.deref()).to.equal(undefined);
    expect(await history.get("first")).to.equal(undefined);
    expect((await history.get("e19"))!.payload).to.deep.equal({ at: new Date(21), text: "x".repeat(10_000) });
  });
});

describe("memory history: unusual notes", () => {
  it("writes a note made by a payload's getter while another note is written, both whole", async () => {
    const history = new MemoryHistory();
    const payload = {
      first: "a",
      get noted(): string {
        // A getter noting into the history while the event that holds it is written.
        history.noteEvent({ id: "inner", origin: { kind: "queue", queue: "q" }, receivedAt: 1, deliveries: [], payload: { inner: true } });
        history.noteRun({ eventId: "inner", run: { task: "t", attempt: 1, startedAt: 1, durationMs: 1, outcome: "success" }, status: "succeeded" });
        return "b";
      },
    };
    history.noteEvent({ id: "outer", origin: { kind: "queue", queue: "q" }, receivedAt: 2, deliveries: [], payload });
    expect((await history.get("outer"))!.payload).to.deep.equal({ first: "a", noted: "b" });
    expect((await history.get("inner"))!.payload).to.deep.equal({ inner: true });
    expect((await history.get("inner"))!.runs).to.have.length(1);
  });

  it("keeps a run whose error is null (outside its type) as a copy, without throwing", async () => {
    const history = new MemoryHistory();
    history.noteEvent({ id: "e", origin: { kind: "queue", queue: "q" }, receivedAt: 1, deliveries: [{ task: "t", queue: "q", messageId: "e" }], payload: 1 });
    const run = { task: "t", attempt: 1, startedAt: 2, durationMs: 1, outcome: "retry", error: null } as unknown as RunNote["run"];
    history.noteRun({ eventId: "e", run, status: "failed" });
    expect((await history.get("e"))!.runs).to.deep.equal([{ task: "t", attempt: 1, startedAt: 2, durationMs: 1, outcome: "retry", error: null }]);
  });
});

describe("memory history: reads brought up to date note by note", () => {
  /** Notes of every kind, in a random order: repeats, late times, children and runs before their parent and event. */
  const notesOf = (count: number, seed: number): Array<(h: MemoryHistory) => void> => {
    let state = seed;
    const random = () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
    const ids = Array.from({ length: count }, (_, i) => `e${i}`);
    const pick = () => ids[Math.floor(random() * ids.length)]!;
    const notes: Array<(h: MemoryHistory) => void> = [];
    for (let i = 0; i < count; i++) {
      const id = random() < 0.1 ? pick() : ids[i]!;
      const receivedAt = 10_000 + i - (random() < 0.1 ? Math.floor(random() * 50) : 0);
      const parentId = random() < 0.3 ? pick() : undefined;
      const replayOf = random() < 0.05 ? pick() : undefined;
      notes.push((h) => h.noteEvent({ id, origin: { kind: "queue", queue: "q" }, receivedAt, deliveries: [{ task: "t", queue: "q", messageId: id }], payload: { i }, ...(parentId === undefined ? {} : { parentId }), ...(replayOf === undefined ? {} : { replayOf }) }));
      if (random() < 0.7) {
        const eventId = random() < 0.8 ? id : pick();
        const attempt = i;
        notes.push((h) => h.noteRun({ eventId, run: { task: "t", attempt, startedAt: receivedAt, durationMs: 1, outcome: "success" }, status: "succeeded" }));
      }
    }
    return notes;
  };

  const everything = async (h: MemoryHistory): Promise<unknown> => {
    const listed: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.list({ limit: 500, cursor });
      listed.push(...page.events);
      cursor = page.next;
    } while (cursor !== undefined);
    const events = await Promise.all(listed.map((e) => h.get((e as { id: string }).id)));
    return { listed, events, size: (await h.size()).events, activity: await h.activity(0, 60_000) };
  };

  it("does not show a repeat of an id it holds beyond maxEvents (its first note is the event), read before the repeat or not", async () => {
    for (const readBetween of [true, false]) {
      const history = new MemoryHistory(20);
      const note = (id: string, receivedAt: number) => history.noteEvent({ id, origin: { kind: "queue", queue: "q" }, receivedAt, deliveries: [], payload: receivedAt });
      // 21 events, none dropped (the log holds up to 22): the oldest, e0, is beyond the 20 shown.
      for (let i = 0; i <= 20; i++) note(`e${i}`, 1_000 + i);
      if (readBetween) expect((await history.list({ limit: 500 })).events.map((e) => e.id)).not.to.include("e0");
      note("e0", 5_000);
      const listed = (await history.list({ limit: 500 })).events.map((e) => e.id);
      expect(listed, `read between: ${readBetween}`).not.to.include("e0");
      expect(listed).to.have.length(20);
    }
  });

  for (const maxEvents of [5_000, 150]) {
    it(`gives what an index made at once from the same notes gives (maxEvents ${maxEvents}, segments ${maxEvents === 150 ? "dropped" : "kept"})`, async () => {
      for (const seed of [3, 11, 29]) {
        const notes = notesOf(1_500, seed);
        const stepwise = new MemoryHistory(maxEvents);
        const atOnce = new MemoryHistory(maxEvents);
        let state = seed;
        for (const note of notes) {
          note(stepwise);
          // A read now and then: the next one reads on from there.
          if ((state = (state * 16_807) % 2_147_483_647) % 7 === 0) await stepwise.list({ limit: 5 });
          note(atOnce);
        }
        expect(await everything(stepwise)).to.deep.equal(await everything(atOnce));
      }
    });
  }
});
