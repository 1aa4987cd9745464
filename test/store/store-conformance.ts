import { expect } from "chai";
import type { QueuedMessage, Store } from "../../src/store/store";
import { StoreRefusedError } from "../../src/store/store-errors";
import { orderingConformance } from "./ordering-conformance";
import { fanOutConformance } from "./fan-out-conformance";
import { groupConformance } from "./group-conformance";

/** How a conformance run gets stores of one engine. */
export interface StoreUnderTest {
  /** A new, unopened store of the engine with its own empty data. */
  create(limits?: { maxQueued?: number }): Store | Promise<Store>;
  /** Removes what `create` left behind (called after each test). */
  cleanup?(): void | Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function message(id: string, payload: unknown = { n: id }, extra: Partial<QueuedMessage> = {}): QueuedMessage {
  return { id, payload, attempts: 0, enqueuedAt: 1_700_000_000_000, ...extra };
}

const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

/** The error a promise rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/**
 * The behaviour every engine owes the rest of the framework (src/store/store.ts). Run by each
 * engine's test file; engine-specific behaviour (durability, limits of the disk) is tested
 * beside it.
 */
export function storeConformance(engine: string, target: StoreUnderTest): void {
  describe(`Store conformance: ${engine}`, function () {
    let stores: Store[] = [];
    async function open(limits?: { maxQueued?: number }): Promise<Store> {
      const store = await target.create(limits);
      await store.open();
      stores.push(store);
      return store;
    }
    afterEach(async () => {
      for (const store of stores) await store.close();
      stores = [];
      await target.cleanup?.();
    });

    describe("queues", () => {
      it("hands back exactly what was enqueued, Buffers included", async () => {
        const store = await open();
        const raw = Buffer.from([0, 1, 2, 0xff, 0xfe, 0, 0x7f]);
        const payload = {
          body: { text: "héllo ✓", n: 1.5, big: 2 ** 40, neg: -3, yes: true, none: null, list: [1, "two", [3]] },
          bytes: Buffer.from("inner bytes \u0000 with a NUL"),
          nested: { empty: Buffer.alloc(0), deep: [{ b: Buffer.from([9, 8, 7]) }] },
          headers: { "x-event-id": "e1" },
          client: ["127.0.0.1", 5000],
          received_at: 1_700_000_000.123,
        };
        const sent = message("m1", payload, { raw });
        await store.enqueue("q", sent);
        const [got] = await store.claim("q", 10);
        expect(got).to.deep.equal(sent);
        expect(Buffer.isBuffer(got.raw)).to.equal(true);
        expect(got.raw?.equals(raw)).to.equal(true);
        const gotPayload = got.payload as typeof payload;
        expect(Buffer.isBuffer(gotPayload.bytes)).to.equal(true);
        expect(gotPayload.bytes.equals(payload.bytes)).to.equal(true);
        expect(gotPayload.nested.deep[0].b.equals(Buffer.from([9, 8, 7]))).to.equal(true);
      });

      it("keeps plain payloads as they are: strings, null, an empty raw body, a large body", async () => {
        const store = await open();
        const large = Buffer.alloc(1024 * 1024 + 3, 0xab);
        const sent = [
          message("s", "just text"),
          message("n", null),
          message("e", null, { raw: Buffer.alloc(0) }),
          message("l", { size: large.length }, { raw: large }),
          message("err", 1, { attempts: 2, lastError: "boom" }),
        ];
        for (const m of sent) await store.enqueue("q", m);
        expect(await store.claim("q", 10)).to.deep.equal(sent);
      });

      it("is first-in first-out per queue", async () => {
        const store = await open();
        for (let i = 0; i < 10; i++) await store.enqueue("q", message(`m${i}`));
        expect(ids(await store.claim("q", 3))).to.deep.equal(["m0", "m1", "m2"]);
        expect(ids(await store.claim("q", 100))).to.deep.equal(["m3", "m4", "m5", "m6", "m7", "m8", "m9"]);
      });

      it("keeps call order for concurrent enqueues", async () => {
        const store = await open();
        await Promise.all(Array.from({ length: 200 }, (_, i) => store.enqueue("q", message(`m${i}`))));
        expect(ids(await store.claim("q", 500))).to.deep.equal(Array.from({ length: 200 }, (_, i) => `m${i}`));
      });

      it("keeps queues apart", async () => {
        const store = await open();
        await store.enqueue("a", message("a1"));
        await store.enqueue("b", message("b1"));
        await store.enqueue("a", message("a2"));
        expect(await store.depth("a")).to.equal(2);
        expect(await store.depth("b")).to.equal(1);
        expect(await store.depth("nothing")).to.equal(0);
        expect(ids(await store.claim("b", 10))).to.deep.equal(["b1"]);
        expect(ids(await store.claim("a", 10))).to.deep.equal(["a1", "a2"]);
        expect(await store.claim("nothing", 10)).to.deep.equal([]);
      });

      it("respects the claim limit", async () => {
        const store = await open();
        for (let i = 0; i < 3; i++) await store.enqueue("q", message(`m${i}`));
        expect(await store.claim("q", 0)).to.deep.equal([]);
        expect(ids(await store.claim("q", 1))).to.deep.equal(["m0"]);
      });

      it("does not hand out a claimed message again, and counts it in the depth", async () => {
        const store = await open();
        await store.enqueue("q", message("m1"));
        expect(ids(await store.claim("q", 10))).to.deep.equal(["m1"]);
        expect(await store.claim("q", 10)).to.deep.equal([]);
        expect(await store.depth("q")).to.equal(1);
      });

      it("removes a completed message", async () => {
        const store = await open();
        await store.enqueue("q", message("m1"));
        await store.enqueue("q", message("m2"));
        await store.claim("q", 1);
        await store.complete("q", "m1");
        expect(await store.depth("q")).to.equal(1);
        expect(ids(await store.claim("q", 10))).to.deep.equal(["m2"]);
        await store.complete("q", "m2");
        expect(await store.depth("q")).to.equal(0);
        expect(await store.claim("q", 10)).to.deep.equal([]);
      });

      it("completes and appends the emitted message in one step", async () => {
        const store = await open();
        await store.enqueue("in", message("m1", 1));
        const [input] = await store.claim("in", 1);
        const out = message("out-1", { doubled: 2 });
        await store.complete("in", input.id, { queue: "out", message: out });
        expect(await store.depth("in")).to.equal(0);
        expect(await store.depth("out")).to.equal(1);
        expect(await store.claim("out", 10)).to.deep.equal([out]);
      });

      it("accepts an emit even past the queue limit: its input is consumed in the same step", async () => {
        const store = await open({ maxQueued: 1 });
        await store.enqueue("in", message("m1"));
        await store.enqueue("out", message("o0"));
        await store.claim("in", 1);
        await store.complete("in", "m1", { queue: "out", message: message("o1") });
        expect(await store.depth("out")).to.equal(2);
      });

      it("returns released messages to the front of the queue, in their order", async () => {
        const store = await open();
        for (const id of ["a", "b", "c"]) await store.enqueue("q", message(id));
        expect(ids(await store.claim("q", 2))).to.deep.equal(["a", "b"]);
        await store.release("q", ["a", "b"]);
        expect(ids(await store.claim("q", 10))).to.deep.equal(["a", "b", "c"]);
        await store.release("q", ["b"]);
        expect(ids(await store.claim("q", 10))).to.deep.equal(["b"]);
        await store.release("q", ["unknown"]);
        expect(await store.depth("q")).to.equal(3);
      });

      it("hides a retried message until its time, with its new attempt count and error", async () => {
        const store = await open();
        await store.enqueue("q", message("m1"));
        const [claimed] = await store.claim("q", 1);
        const retried = { ...claimed, attempts: 1, lastError: "boom" };
        await store.retryLater("q", retried, Date.now() + 150);
        expect(await store.depth("q")).to.equal(1);
        expect(await store.claim("q", 10)).to.deep.equal([]);
        await sleep(200);
        expect(await store.claim("q", 10)).to.deep.equal([retried]);
        expect(await store.depth("q")).to.equal(1);
        await store.complete("q", "m1");
        expect(await store.depth("q")).to.equal(0);
      });

      it("hands out a retry whose time has come, and can retry it again", async () => {
        const store = await open();
        await store.enqueue("q", message("m1"));
        await store.enqueue("q", message("m2"));
        const [m1] = await store.claim("q", 1);
        await store.retryLater("q", { ...m1, attempts: 1 }, Date.now() - 1);
        const got = await store.claim("q", 10);
        expect(ids(got).sort()).to.deep.equal(["m1", "m2"]);
        await store.retryLater("q", { ...m1, attempts: 2 }, Date.now() - 1);
        const again = await store.claim("q", 10);
        expect(again).to.have.length(1);
        expect(again[0]).to.include({ id: "m1", attempts: 2 });
        expect(await store.depth("q")).to.equal(2);
      });

      it("moves a message to the dead letters in one step", async () => {
        const store = await open();
        await store.enqueue("q", message("m1", { x: 1 }, { raw: Buffer.from("raw") }));
        await store.enqueue("q", message("m2"));
        const [m1] = await store.claim("q", 1);
        const letter = { queue: "q", task: "t", message: { ...m1, attempts: 3, lastError: "boom" }, error: "boom", attempts: 3, diedAt: Date.now() };
        await store.deadLetter(letter);
        expect(await store.depth("q")).to.equal(1);
        expect(await store.deadLetters.get("m1")).to.deep.equal(letter);
        expect(await store.deadLetters.list()).to.deep.equal([letter]);
        expect(await store.deadLetters.list("q")).to.deep.equal([letter]);
        expect(await store.deadLetters.list("other")).to.deep.equal([]);
        expect(await store.deadLetters.get("nope")).to.equal(undefined);
        // An id no engine keeps (U+0000, or longer than any key) is no letter, rather than an error.
        for (const id of ["m1\u0000", "m".repeat(10_000)]) {
          expect(await store.deadLetters.get(id)).to.equal(undefined);
          expect(await store.deadLetters.replay(id)).to.equal(false);
          expect(await store.deadLetters.purge({ id })).to.equal(0);
        }
        expect(ids(await store.claim("q", 10))).to.deep.equal(["m2"]);
      });

      it("replays a dead letter to the end of its queue with a fresh attempt count", async () => {
        const store = await open();
        await store.enqueue("q", message("m1", { x: 1 }));
        const [m1] = await store.claim("q", 1);
        await store.deadLetter({ queue: "q", task: "t", message: { ...m1, attempts: 5, lastError: "boom" }, error: "boom", attempts: 5, diedAt: Date.now() });
        await store.enqueue("q", message("m2"));
        expect(await store.deadLetters.replay("m1")).to.equal(true);
        expect(await store.deadLetters.replay("m1")).to.equal(false);
        expect(await store.deadLetters.replay("unknown")).to.equal(false);
        expect(await store.deadLetters.list()).to.deep.equal([]);
        expect(await store.depth("q")).to.equal(2);
        const got = await store.claim("q", 10);
        expect(ids(got)).to.deep.equal(["m2", "m1"]);
        expect(got[1]).to.deep.equal(message("m1", { x: 1 }));
      });

      it("purges dead letters by id, by queue, or all, and tells how many", async () => {
        const store = await open();
        let n = 0;
        for (const queue of ["a", "a", "b", "c"]) {
          const id = `m${n++}`;
          await store.enqueue(queue, message(id));
          await store.claim(queue, 1);
          await store.deadLetter({ queue, task: "t", message: message(id), error: "e", attempts: 1, diedAt: n });
        }
        expect(await store.deadLetters.purge({ id: "nope" })).to.equal(0);
        expect(await store.deadLetters.purge({ id: "m0", queue: "b" })).to.equal(0);
        expect(await store.deadLetters.purge({ id: "m0" })).to.equal(1);
        expect(await store.deadLetters.purge({ queue: "a" })).to.equal(1);
        expect((await store.deadLetters.list()).map((l) => l.message.id)).to.deep.equal(["m2", "m3"]);
        expect(await store.deadLetters.purge()).to.equal(2);
        expect(await store.deadLetters.list()).to.deep.equal([]);
      });

      it("lists dead letters oldest first", async () => {
        const store = await open();
        for (const [id, diedAt] of [["z", 1], ["a", 3], ["m", 2]] as const) {
          await store.deadLetter({ queue: "q", task: "t", message: message(id), error: "e", attempts: 1, diedAt });
        }
        expect((await store.deadLetters.list()).map((l) => l.message.id)).to.deep.equal(["z", "m", "a"]);
      });
    });

    describe("stats", () => {
      it("reports waiting, in flight, the oldest enqueue time and dead letters per queue; keeps the trace context", async () => {
        const store = await open();
        expect(await store.stats("q")).to.deep.equal({ waiting: 0, inFlight: 0, oldestEnqueuedAt: undefined, deadLetters: 0, delayed: 0 });
        const traceContext = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };
        await store.enqueue("q", message("a", 1, { enqueuedAt: 1_000, traceContext }));
        await store.enqueue("q", message("b", 2, { enqueuedAt: 2_000 }));
        await store.enqueue("q", message("c", 3, { enqueuedAt: 3_000 }));
        await store.enqueue("other", message("x", 0, { enqueuedAt: 500 }));
        const [a, b] = await store.claim("q", 2);
        expect(a.traceContext).to.deep.equal(traceContext);
        expect(await store.stats("q")).to.deep.equal({ waiting: 1, inFlight: 2, oldestEnqueuedAt: 1_000, deadLetters: 0, delayed: 0 });
        await store.deadLetter({ queue: "q", task: "t", message: { ...a, attempts: 1, lastError: "boom" }, error: "boom", attempts: 1, diedAt: Date.now() });
        await store.retryLater("q", { ...b, attempts: 1 }, Date.now() + 60_000);
        // The retry waits for its time: one of the two waiting is delayed.
        expect(await store.stats("q")).to.deep.equal({ waiting: 2, inFlight: 0, oldestEnqueuedAt: 2_000, deadLetters: 1, delayed: 1 });
        expect(await store.stats("other")).to.deep.include({ waiting: 1, oldestEnqueuedAt: 500, deadLetters: 0 });
        expect((await store.deadLetters.list("q"))[0].message.traceContext).to.deep.equal(traceContext);
      });
    });

    describe("queueNames", () => {
      it("names every queue holding a waiting, claimed, delayed or held-back message or a dead letter, sorted", async () => {
        const store = await open();
        expect(await store.queueNames()).to.deep.equal([]);
        await store.enqueue("b-waiting", message("w"));
        await store.enqueue("a-claimed", message("c"));
        await store.claim("a-claimed", 1);
        await store.enqueue("d-delayed", message("r"));
        const [retried] = await store.claim("d-delayed", 1);
        await store.retryLater("d-delayed", { ...retried, attempts: 1 }, Date.now() + 60_000);
        await store.enqueue("c-dead", message("x"));
        const [dying] = await store.claim("c-dead", 1);
        await store.deadLetter({ queue: "c-dead", task: "t", message: dying, error: "boom", attempts: 1, diedAt: Date.now() });
        await store.enqueue("e-done", message("done"));
        await store.claim("e-done", 1);
        await store.complete("e-done", "done");
        expect(await store.queueNames()).to.deep.equal(["a-claimed", "b-waiting", "c-dead", "d-delayed"]);
        await store.deadLetters.purge({ queue: "c-dead" });
        expect(await store.queueNames()).to.not.include("c-dead");
      });
    });

    describe("admission", () => {
      it("admits while the queue is under its limit", async () => {
        const store = await open({ maxQueued: 2 });
        expect(store.admit("q")).to.equal(undefined);
        await store.enqueue("q", message("m1"));
        expect(store.admit("q")).to.equal(undefined);
      });

      it("refuses with queue_full at the limit, on admit and on enqueue, and admits again once a message leaves", async () => {
        const store = await open({ maxQueued: 2 });
        await store.enqueue("q", message("m1"));
        await store.enqueue("q", message("m2"));
        expect(store.admit("q")).to.include({ code: "queue_full" });
        expect(store.admit("q")?.retryAfterSeconds).to.be.greaterThan(0);
        expect(store.admit("other")).to.equal(undefined);
        const error = await rejection(store.enqueue("q", message("m3")));
        expect(error).to.be.instanceOf(StoreRefusedError);
        expect((error as StoreRefusedError).refusal.code).to.equal("queue_full");
        await store.enqueue("q", message("internal"), { internal: true });
        expect(await store.depth("q")).to.equal(3);
        await store.claim("q", 2);
        await store.complete("q", "m1");
        await store.complete("q", "m2");
        expect(store.admit("q")).to.equal(undefined);
        expect(ids(await store.claim("q", 10))).to.deep.equal(["internal"]);
      });

      it("counts delayed and claimed messages against the limit", async () => {
        const store = await open({ maxQueued: 2 });
        await store.enqueue("q", message("m1"));
        await store.enqueue("q", message("m2"));
        const [m1] = await store.claim("q", 1);
        await store.retryLater("q", m1, Date.now() + 60_000);
        expect(store.admit("q")).to.include({ code: "queue_full" });
      });
    });

    orderingConformance(() => open());
    groupConformance(() => open());
    fanOutConformance(open);

    describe("watch", () => {
      it("tells a listener after an enqueue, once the message can be claimed", async () => {
        const store = await open();
        const seen: string[][] = [];
        const done = new Promise<void>((resolve) => {
          store.watch("q", () => {
            void store.claim("q", 10).then((got) => {
              seen.push(ids(got));
              resolve();
            });
          });
        });
        await store.enqueue("q", message("m1"));
        await done;
        expect(seen[0]).to.deep.equal(["m1"]);
      });

      it("tells the emit queue's listeners, on release and on replay; not after unsubscribing", async () => {
        const store = await open();
        const calls = { in: 0, out: 0 };
        const stopIn = store.watch("in", () => calls.in++);
        store.watch("out", () => calls.out++);
        await store.enqueue("in", message("m1"));
        expect(calls.in).to.equal(1);
        await store.claim("in", 1);
        await store.release("in", ["m1"]);
        expect(calls.in).to.equal(2);
        await store.claim("in", 1);
        await store.complete("in", "m1", { queue: "out", message: message("o1") });
        expect(calls.out).to.equal(1);
        const [o1] = await store.claim("out", 1);
        await store.deadLetter({ queue: "out", task: "t", message: o1, error: "e", attempts: 1, diedAt: 1 });
        await store.deadLetters.replay("o1");
        expect(calls.out).to.equal(2);
        stopIn();
        await store.enqueue("in", message("m2"));
        expect(calls.in).to.equal(2);
      });
    });

    describe("state", () => {
      it("stores values by namespace and key", async () => {
        const store = await open();
        const a = store.state("a");
        const b = store.state("b");
        expect(await a.get("k")).to.equal(undefined);
        await a.set("k", { nested: [1, "x"], bytes: Buffer.from([1, 2]) });
        await a.set("n", null);
        await b.set("k", 42);
        expect(await a.get("k")).to.deep.equal({ nested: [1, "x"], bytes: Buffer.from([1, 2]) });
        expect(await a.get("n")).to.equal(null);
        expect(await b.get("k")).to.equal(42);
        await a.set("k", "replaced");
        expect(await a.get("k")).to.equal("replaced");
        expect(await store.state("a").get("k")).to.equal("replaced");
      });

      it("deletes, telling whether there was a value", async () => {
        const store = await open();
        const s = store.state("ns");
        await s.set("k", 1);
        expect(await s.delete("k")).to.equal(true);
        expect(await s.delete("k")).to.equal(false);
        expect(await s.get("k")).to.equal(undefined);
      });

      it("forgets a value after its time-to-live", async () => {
        const store = await open();
        const s = store.state("ns");
        await s.set("short", "v", { ttlMs: 60 });
        await s.set("long", "v", { ttlMs: 60_000 });
        await s.set("forever", "v");
        expect(await s.get("short")).to.equal("v");
        await sleep(100);
        expect(await s.get("short")).to.equal(undefined);
        expect(await s.delete("short")).to.equal(false);
        expect(await s.get("long")).to.equal("v");
        expect(await s.get("forever")).to.equal("v");
      });

      it("a later set without a time-to-live keeps the value for good", async () => {
        const store = await open();
        const s = store.state("ns");
        await s.set("k", 1, { ttlMs: 50 });
        await s.set("k", 2);
        await sleep(80);
        expect(await s.get("k")).to.equal(2);
      });

      it("setIfAbsent sets only an absent or expired key", async () => {
        const store = await open();
        const s = store.state("ns");
        expect(await s.setIfAbsent("k", "first")).to.equal(true);
        expect(await s.setIfAbsent("k", "second")).to.equal(false);
        expect(await s.get("k")).to.equal("first");
        expect(await s.setIfAbsent("t", "old", { ttlMs: 40 })).to.equal(true);
        await sleep(70);
        expect(await s.setIfAbsent("t", "new")).to.equal(true);
        expect(await s.get("t")).to.equal("new");
      });

      it("setIfAbsent lets exactly one of many concurrent callers win", async () => {
        const store = await open();
        const s = store.state("ns");
        const results = await Promise.all(Array.from({ length: 25 }, (_, i) => s.setIfAbsent("k", i)));
        expect(results.filter(Boolean)).to.have.length(1);
        expect(await s.get("k")).to.equal(results.indexOf(true));
      });

      it("keeps a value as emitted values are kept: a copy, in the stored form, and refuses what cannot be stored", async () => {
        const store = await open();
        const s = store.state("ns");
        const value = { list: [1], tags: new Map([["a", 1]]), seen: new Set(["x"]), at: new Date(0) };
        await s.set("k", value);
        value.list.push(2);
        const got = await s.get<{ list: number[] }>("k");
        expect(got).to.deep.equal({ list: [1], tags: { a: 1 }, seen: ["x"], at: new Date(0) });
        got!.list.push(3);
        expect(await s.get("k")).to.deep.include({ list: [1] });
        expect(await s.setIfAbsent("set", new Set([1]))).to.equal(true);
        expect(await s.get("set")).to.deep.equal([1]);
        const cycle: Record<string, unknown> = {};
        cycle.self = cycle;
        for (const bad of [{ run: () => undefined }, cycle]) {
          let error: unknown;
          await s.set("bad", bad).catch((e: unknown) => (error = e));
          expect(error, JSON.stringify(Object.keys(bad))).to.be.instanceOf(TypeError);
          expect(await s.setIfAbsent("bad", bad).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
          expect(await s.get("bad")).to.equal(undefined);
        }
      });

      it("takes keys of any length and characters", async () => {
        const store = await open();
        const s = store.state("ns");
        const long = "x".repeat(5000);
        await s.set(long, "long");
        await s.set("", "empty");
        await s.set("a:b/c\u00e9\u2713", "odd");
        expect(await s.get(long)).to.equal("long");
        expect(await s.get("x".repeat(4999))).to.equal(undefined);
        expect(await s.get("")).to.equal("empty");
        expect(await s.get("a:b/c\u00e9\u2713")).to.equal("odd");
      });
    });
  });
}
