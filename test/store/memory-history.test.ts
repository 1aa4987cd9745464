import { expect } from "chai";
import { MemoryStore } from "../../src/store/memory/memory-store";
import type { Store } from "../../src/store/store";
import { describeHistoryConformance } from "./history-conformance";

describeHistoryConformance("memory", () => new MemoryStore());

/** The same store again, opened and closed on its own: how the suite's restart and replica cases run on the memory engine. */
const sameData = (store: Store): Store => Object.assign(Object.create(store) as Store, { open: async () => undefined, close: async () => undefined });

// The memory engine keeps its data across close() and open() of one instance: that runs the
// suite's durability and replica cases on it, so that they are known to pass on a correct engine.
describeHistoryConformance("memory, one instance reopened and shared", () => new MemoryStore(), { reopen: (closed) => sameData(closed), replica: (open) => sameData(open) });

describe("MemoryStore history bound", () => {
  it("keeps at most about maxEvents events, dropping the oldest in the background", async () => {
    const store = new MemoryStore({}, { historyMaxEvents: 100 });
    await store.open();
    try {
      for (let i = 0; i < 1_000; i++) {
        store.history.noteEvent({ id: `e${i}`, origin: { kind: "webhook", source: "s" }, receivedAt: 1_000 + i, deliveries: [], payload: { i } });
        // Turns of the event loop between bursts: the background step applies and trims.
        if (i % 50 === 49) await new Promise((r) => setImmediate(r));
      }
      await store.history.flush();
      const { events } = await store.history.size();
      expect(events).to.be.at.least(100).and.at.most(110);
      expect((await store.history.list({ limit: 1 })).events[0].id).to.equal("e999");
      expect(await store.history.get("e0")).to.equal(undefined);
    } finally {
      await store.close();
    }
  });
});

describe("MemoryStore history bound: runs", () => {
  it("keeps no more than a bounded number of runs whose event it does not hold (dropped before their runs came, or never noted)", async () => {
    const store = new MemoryStore({}, { historyMaxEvents: 10 });
    await store.open();
    try {
      const run = { task: "t", attempt: 1, startedAt: Date.now(), durationMs: 1, outcome: "success" as const };
      for (let i = 0; i < 20; i++) store.history.noteEvent({ id: `kept${i}`, origin: { kind: "webhook", source: "s" }, receivedAt: Date.now(), deliveries: [], payload: { i } });
      // A backlog's runs, after its events were dropped by the bound: they refer to nothing kept.
      for (let i = 0; i < 50_000; i++) store.history.noteRun({ eventId: `gone${i}`, run, status: "succeeded" });
      await store.history.flush();
      const { bytes } = await store.history.size();
      // 10 events and their slack; runs of events not held are not kept by the tens of thousands.
      expect(bytes).to.be.below(200_000);
      // A run noted just before its event still joins it.
      store.history.noteRun({ eventId: "late", run, status: "succeeded" });
      store.history.noteEvent({ id: "late", origin: { kind: "webhook", source: "s" }, receivedAt: Date.now(), deliveries: [{ task: "t", queue: "webhook:t", messageId: "late" }], payload: {} });
      expect((await store.history.get("late"))!.runs).to.have.length(1);
    } finally {
      await store.close();
    }
  });
});

describe("MemoryStore history order", () => {
  it("lists events noted out of order newest first: same millisecond with smaller ids, and older times noted late", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      const noted: Array<[string, number]> = [["m", 2_000], ["z", 2_000], ["a", 2_000], ["k", 1_000], ["b", 3_000], ["y", 1_500], ["c", 2_000]];
      for (const [id, receivedAt] of noted) {
        store.history.noteEvent({ id, origin: { kind: "webhook", source: "s" }, receivedAt, deliveries: [], payload: {} });
        // Some in one batch, some in the next: each batch places its events among those kept.
        if (id === "z" || id === "y") await new Promise((r) => setImmediate(r));
      }
      const { events } = await store.history.list({});
      expect(events.map((e) => e.id)).to.deep.equal(["b", "z", "m", "c", "a", "y", "k"]);
    } finally {
      await store.close();
    }
  });
});

describe("MemoryStore history order: batches", () => {
  it("places batches of events, many in each millisecond with ids in no order, as a full sort would", async () => {
    const store = new MemoryStore({}, { historyMaxEvents: 5_000 });
    await store.open();
    try {
      const noted: Array<{ id: string; receivedAt: number }> = [];
      let seed = 7;
      const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
      for (let i = 0; i < 3_000; i++) {
        // Mostly in order, a few milliseconds late now and then, about 40 events per millisecond.
        const receivedAt = 1_000 + Math.floor(i / 40) - (random() < 0.1 ? Math.floor(random() * 5) : 0);
        const id = `e${Math.floor(random() * 1e9).toString(36)}-${i}`;
        noted.push({ id, receivedAt });
        store.history.noteEvent({ id, origin: { kind: "webhook", source: "s" }, receivedAt, deliveries: [], payload: {} });
        if (random() < 0.02) await new Promise((r) => setImmediate(r));
      }
      const expected = noted
        .sort((a, b) => b.receivedAt - a.receivedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
        .map((e) => e.id);
      const listed: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.history.list({ limit: 500, cursor });
        listed.push(...page.events.map((e) => e.id));
        cursor = page.next;
      } while (cursor !== undefined);
      expect(listed).to.deep.equal(expected);
    } finally {
      await store.close();
    }
  });
});

describe("MemoryStore history bound: bytes", () => {
  const webhook = (id: string, receivedAt: number, bytes: number) => ({
    id,
    origin: { kind: "webhook" as const, source: "s" },
    receivedAt,
    deliveries: [{ task: "t", queue: "webhook:t", messageId: id }],
    payload: { body: { text: "x".repeat(bytes) }, headers: { "content-type": "application/json" } },
    raw: Buffer.from(JSON.stringify({ text: "x".repeat(bytes) })),
    bodyFromRaw: true as const,
  });

  it("keeps at most about maxBytes of events, dropping the oldest in the background, whatever the count", async () => {
    const store = new MemoryStore({}, { historyMaxEvents: 10_000, historyMaxBytes: 1_000_000 });
    await store.open();
    try {
      // 200 events of about 20 KB: 4 MB, four times the bound, far below the count.
      for (let i = 0; i < 200; i++) {
        store.history.noteEvent(webhook(`big${i}`, 1_000 + i, 20_000));
        if (i % 10 === 9) await new Promise((r) => setImmediate(r));
      }
      await store.history.flush();
      const { events, bytes } = await store.history.size();
      expect(bytes).to.be.at.most(1_000_000).and.above(800_000);
      expect(events).to.be.above(30).and.below(60);
      const newest = await store.history.get("big199");
      expect((newest!.payload as { body: { text: string } }).body.text).to.have.length(20_000);
      expect(await store.history.get("big0")).to.equal(undefined);
      expect((await store.history.list({ limit: 500 })).events.map((e) => e.id).at(-1)).to.equal(`big${200 - events}`);
    } finally {
      await store.close();
    }
  });

  it("counts a value nested deeper than 64 levels whole (a task forwarding a deep webhook body emits one), and one nested thousands deep", async () => {
    const store = new MemoryStore({}, { historyMaxEvents: 10_000, historyMaxBytes: 1_000_000 });
    await store.open();
    try {
      const deep = (depth: number, leaf: unknown): unknown => {
        let value = leaf;
        for (let i = 0; i < depth; i++) value = { a: value };
        return value;
      };
      // 100 values of about 20 KB each, 100 levels deep: 2 MB, twice the bound.
      for (let i = 0; i < 100; i++) {
        store.history.noteEvent({ id: `deep${i}`, origin: { kind: "queue", queue: "q" }, receivedAt: 1_000 + i, deliveries: [], payload: deep(100, "x".repeat(20_000)) });
      }
      await store.history.flush();
      const { events, bytes } = await store.history.size();
      expect(bytes).to.be.at.most(1_000_000).and.above(800_000);
      expect(events).to.be.below(60);
      // Deeper than a copy goes (it is kept as it was noted): counted without running out of stack.
      store.history.noteEvent({ id: "deepest", origin: { kind: "queue", queue: "q" }, receivedAt: 3_000, deliveries: [], payload: deep(20_000, "y".repeat(300_000)) });
      await store.history.flush();
      expect((await store.history.size()).events).to.equal(1);
      expect(await store.history.get("deepest")).not.to.equal(undefined);
    } finally {
      await store.close();
    }
  });

  it("counts runs' errors in the bound, and keeps the newest event even when it alone is larger", async () => {
    const store = new MemoryStore({}, { historyMaxEvents: 10_000, historyMaxBytes: 100_000 });
    await store.open();
    try {
      store.history.noteEvent(webhook("small", 1_000, 10));
      await store.history.flush();
      const before = (await store.history.size()).bytes;
      const error = { type: "Error", message: "boom", stack: "Error: boom\n" + "    at handler (app.js:1:1)\n".repeat(100) };
      store.history.noteRun({ eventId: "small", run: { task: "t", attempt: 1, startedAt: 1_000, durationMs: 1, outcome: "retry", error }, status: "failed" });
      await store.history.flush();
      expect((await store.history.size()).bytes - before).to.be.above(error.stack.length);
      store.history.noteEvent(webhook("huge", 2_000, 300_000));
      await store.history.flush();
      expect((await store.history.size()).events).to.equal(1);
      expect(await store.history.get("small")).to.equal(undefined);
      expect((await store.history.get("huge"))!.raw!.length).to.be.above(300_000);
    } finally {
      await store.close();
    }
  });
});

describe("MemoryStore history payloads", () => {
  const weird = (): Record<string, unknown> => {
    const value: Record<string, unknown> = { lone: "a\ud800b", nul: "x\u0000y", nested: { list: [1, "two", null, true, { deep: [] }] }, n: 1.5e300 };
    Object.defineProperty(value, "__proto__", { value: { own: true }, enumerable: true, writable: true, configurable: true });
    return value;
  };

  it("gives back exactly what JSON carries (own __proto__ key, lone surrogates, U+0000) and, as the store keeps them, what it does not (undefined, NaN, Buffer, Date)", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      const notJson = { missing: undefined, nan: Number.NaN, bytes: Buffer.from([0, 255]), at: new Date(0) };
      store.history.noteEvent({ id: "json", origin: { kind: "queue", queue: "q" }, receivedAt: 1, deliveries: [], payload: weird() });
      store.history.noteEvent({ id: "other", origin: { kind: "queue", queue: "q" }, receivedAt: 2, deliveries: [], payload: notJson });
      const json = (await store.history.get("json"))!.payload as Record<string, unknown>;
      expect(Object.getPrototypeOf(json)).to.equal(Object.prototype);
      expect(Object.prototype.hasOwnProperty.call(json, "__proto__")).to.equal(true);
      expect(json).to.deep.equal(weird());
      const other = (await store.history.get("other"))!.payload as Record<string, unknown>;
      expect(other).to.have.property("missing");
      expect(Number.isNaN(other.nan)).to.equal(true);
      expect(Buffer.isBuffer(other.bytes) && (other.bytes as Buffer).equals(Buffer.from([0, 255]))).to.equal(true);
      expect(other.at).to.be.instanceOf(Date);
    } finally {
      await store.close();
    }
  });

  it("hands each reader a value of its own, whichever way the payload is kept", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      store.history.noteEvent({ id: "json", origin: { kind: "queue", queue: "q" }, receivedAt: 1, deliveries: [], payload: { list: [1] } });
      store.history.noteEvent({ id: "other", origin: { kind: "queue", queue: "q" }, receivedAt: 2, deliveries: [], payload: { list: [1], at: new Date(0) } });
      for (const id of ["json", "other"]) {
        const first = (await store.history.get(id))!.payload as { list: number[] };
        first.list.push(2);
        expect(((await store.history.get(id))!.payload as { list: number[] }).list).to.deep.equal([1]);
      }
      // A body its raw bytes give back as they are (no Content-Type): not the event's raw Buffer itself.
      const raw = Buffer.from("abc");
      store.history.noteEvent({ id: "bytes", origin: { kind: "webhook", source: "s" }, receivedAt: 3, deliveries: [], payload: { body: Buffer.from(raw), headers: {} }, raw, bodyFromRaw: true });
      const event = (await store.history.get("bytes"))!;
      const body = (event.payload as { body: Buffer }).body;
      expect(Buffer.isBuffer(body) && body.equals(raw)).to.equal(true);
      body[0] = 0x7a;
      expect(event.raw!.toString()).to.equal("abc");
    } finally {
      await store.close();
    }
  });
});
