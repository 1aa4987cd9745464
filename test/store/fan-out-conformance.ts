import { expect } from "chai";
import type { EmitRecord, QueuedMessage, Store } from "../../src/store/store";
import { StoreRefusedError } from "../../src/store/store-errors";

/*
 * What every engine owes fan-out (Store.enqueueAll, Store.complete with several emits): an
 * event's copies are stored all or none, and a task's outputs arrive with its input's removal.
 * Called from storeConformance, inside its describe, with its `open`.
 */

const msg = (id: string, extra: Partial<QueuedMessage> = {}): QueuedMessage => ({ id, payload: { n: id }, attempts: 0, enqueuedAt: 1_700_000_000_000, ...extra });
const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);
/** A payload no engine that writes values out can encode (msgpack has 64-bit integers). */
const UNENCODABLE = { big: 2n ** 70n };

async function depths(store: Store, queues: readonly string[]): Promise<number[]> {
  return Promise.all(queues.map((q) => store.depth(q)));
}

async function failed(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

export function fanOutConformance(open: (limits?: { maxQueued?: number }) => Promise<Store>): void {
  describe("fan-out (enqueueAll, complete with several emits)", () => {
    it("stores every copy in its own queue, keyed and unkeyed, each claimable and completed on its own", async () => {
      const store = await open();
      await store.enqueueAll([
        { queue: "a", message: msg("e@a") },
        { queue: "b", message: msg("e@b", { orderingKey: "k" }) },
        { queue: "c", message: msg("e@c") },
      ]);
      expect(await depths(store, ["a", "b", "c"])).to.deep.equal([1, 1, 1]);
      expect(ids(await store.claim("b", 10))).to.deep.equal(["e@b"]);
      await store.complete("b", "e@b");
      expect(ids(await store.claim("a", 10))).to.deep.equal(["e@a"]);
      expect(await depths(store, ["a", "b", "c"])).to.deep.equal([1, 0, 1]);
    });

    it("refuses them all when one queue is full: no copy stored", async () => {
      const store = await open({ maxQueued: 2 });
      await store.enqueue("b", msg("b1"));
      await store.enqueue("b", msg("b2"));
      const error = await failed(store.enqueueAll([{ queue: "a", message: msg("e@a") }, { queue: "b", message: msg("e@b") }, { queue: "c", message: msg("e@c") }]));
      expect(error).to.be.instanceOf(StoreRefusedError);
      expect((error as StoreRefusedError).refusal.code).to.equal("queue_full");
      expect(await depths(store, ["a", "b", "c"])).to.deep.equal([0, 2, 0]);
      // Internal copies (a task's outputs) skip the ingress limits, all of them.
      await store.enqueueAll([{ queue: "a", message: msg("i@a") }, { queue: "b", message: msg("i@b") }], { internal: true });
      expect(await depths(store, ["a", "b"])).to.deep.equal([1, 3]);
    });

    for (const keyed of [false, true]) {
      it(`stores no copy when one cannot be written${keyed ? " (keyed copies)" : ""}, and keeps working`, async function () {
        const store = await open();
        // The memory engine keeps objects as they are: it writes nothing out that could fail.
        if (store.engine === "memory") this.skip();
        const key = keyed ? { orderingKey: "k" } : {};
        const copies: EmitRecord[] = [
          { queue: "a", message: msg("e@a", key) },
          { queue: "b", message: msg("e@b", key) },
          { queue: "c", message: msg("e@c", { ...key, payload: UNENCODABLE }) },
        ];
        await failed(store.enqueueAll(copies));
        expect(await depths(store, ["a", "b", "c"])).to.deep.equal([0, 0, 0]);
        expect(await store.claim("a", 10)).to.deep.equal([]);
        await store.enqueueAll(copies.slice(0, 2));
        expect(ids(await store.claim("a", 10))).to.deep.equal(["e@a"]);
        expect(ids(await store.claim("b", 10))).to.deep.equal(["e@b"]);
      });
    }

    it("completes an input with one output per consumer in one step; with none, only completes it", async () => {
      const store = await open();
      await store.enqueue("in", msg("x"));
      await store.enqueue("in", msg("y"));
      const [x, y] = await store.claim("in", 10);
      await store.complete("in", x.id, [
        { queue: "out@one", message: msg("o@one") },
        { queue: "out@two", message: msg("o@two", { orderingKey: "k" }) },
      ]);
      await store.complete("in", y.id, []);
      expect(await depths(store, ["in", "out@one", "out@two"])).to.deep.equal([0, 1, 1]);
      expect(ids(await store.claim("out@two", 10))).to.deep.equal(["o@two"]);
    });

    it("keeps the input claimed and stores no output when one output cannot be written", async function () {
      const store = await open();
      if (store.engine === "memory") this.skip();
      await store.enqueue("in", msg("x"));
      const [x] = await store.claim("in", 10);
      await failed(store.complete("in", x.id, [{ queue: "o1", message: msg("o@1") }, { queue: "o2", message: msg("o@2", { payload: UNENCODABLE }) }]));
      expect(await depths(store, ["in", "o1", "o2"])).to.deep.equal([1, 0, 0]);
    });
  });
}
