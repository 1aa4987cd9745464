import { expect } from "chai";
import type { QueuedMessage, Store } from "../../src/store/store";

/*
 * The ordering-key rule every engine owes (QueuedMessage.orderingKey): a keyed message is
 * claimable only while no earlier message of its queue with the same key is still in the
 * queue. Called from storeConformance, inside its describe, with its `open`.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

export function keyed(id: string, orderingKey: string | undefined, extra: Partial<QueuedMessage> = {}): QueuedMessage {
  const m: QueuedMessage = { id, payload: { n: id }, attempts: 0, enqueuedAt: 1_700_000_000_000, ...extra };
  return orderingKey === undefined ? m : { ...m, orderingKey };
}

export function orderingConformance(open: () => Promise<Store>): void {
  describe("ordering keys", () => {
    async function enqueueAll(store: Store, messages: QueuedMessage[], queue = "q"): Promise<void> {
      for (const m of messages) await store.enqueue(queue, m);
    }
    async function finish(store: Store, messages: readonly QueuedMessage[], queue = "q"): Promise<void> {
      for (const m of messages) await store.complete(queue, m.id);
    }

    it("hands out only the first message of each key; other keys and unkeyed messages alongside, in order", async () => {
      const store = await open();
      await enqueueAll(store, [keyed("a1", "a"), keyed("a2", "a"), keyed("n1", undefined), keyed("b1", "b"), keyed("a3", "a"), keyed("b2", "b"), keyed("n2", undefined)]);
      const first = await store.claim("q", 10);
      expect(ids(first)).to.deep.equal(["a1", "n1", "b1", "n2"]);
      expect(first[0]!.orderingKey).to.equal("a");
      expect(await store.claim("q", 10)).to.deep.equal([]);
      expect(await store.depth("q")).to.equal(7);
    });

    it("hands out the next message of a key once the one before it is done, and tells the watchers", async () => {
      const store = await open();
      await enqueueAll(store, [keyed("a1", "a"), keyed("a2", "a"), keyed("a3", "a"), keyed("b1", "b")]);
      await finish(store, await store.claim("q", 10)); // a1, b1
      let woken = 0;
      store.watch("q", () => woken++);
      expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
      await store.complete("q", "a2");
      expect(woken).to.be.greaterThan(0);
      expect(ids(await store.claim("q", 10))).to.deep.equal(["a3"]);
      await store.complete("q", "a3");
      expect(await store.claim("q", 10)).to.deep.equal([]);
      expect(await store.depth("q")).to.equal(0);
      // The key is free again: a new message of it is claimable at once.
      await store.enqueue("q", keyed("a4", "a"));
      expect(ids(await store.claim("q", 10))).to.deep.equal(["a4"]);
    });

    it("keeps a key held while its first message waits for a retry, and after its time hands out only that one", async () => {
      const store = await open();
      await enqueueAll(store, [keyed("a1", "a"), keyed("a2", "a"), keyed("b1", "b")]);
      const [a1] = await store.claim("q", 1);
      await store.retryLater("q", { ...a1!, attempts: 1, lastError: "boom" }, Date.now() + 150);
      expect(ids(await store.claim("q", 10))).to.deep.equal(["b1"]);
      await store.complete("q", "b1");
      await sleep(200);
      const again = await store.claim("q", 10);
      expect(ids(again)).to.deep.equal(["a1"]);
      expect(again[0]).to.include({ attempts: 1, lastError: "boom", orderingKey: "a" });
      // Retried once more and due at once: still only the head, never a2 past it.
      await store.retryLater("q", { ...again[0]!, attempts: 2 }, Date.now() - 1);
      expect(ids(await store.claim("q", 10))).to.deep.equal(["a1"]);
      await store.complete("q", "a1");
      expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
    });

    it("keeps a released head first in its key", async () => {
      const store = await open();
      await enqueueAll(store, [keyed("a1", "a"), keyed("a2", "a")]);
      await store.claim("q", 10);
      await store.release("q", ["a1"]);
      expect(ids(await store.claim("q", 10))).to.deep.equal(["a1"]);
    });

    it("lets the next message of a key go once the one before it is a dead letter", async () => {
      const store = await open();
      await enqueueAll(store, [keyed("a1", "a"), keyed("a2", "a")]);
      const [a1] = await store.claim("q", 10);
      await store.deadLetter({ queue: "q", task: "t", message: { ...a1!, attempts: 3 }, error: "e", attempts: 3, diedAt: 1 });
      expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
    });

    it("puts a replayed dead letter at the end of its key's line", async () => {
      const store = await open();
      await enqueueAll(store, [keyed("a1", "a"), keyed("a2", "a")]);
      const [a1] = await store.claim("q", 10);
      await store.deadLetter({ queue: "q", task: "t", message: { ...a1!, attempts: 3 }, error: "e", attempts: 3, diedAt: 1 });
      await store.enqueue("q", keyed("a3", "a"));
      expect(await store.deadLetters.replay("a1")).to.equal(true);
      const order: string[] = [];
      for (let i = 0; i < 4; i++) {
        const got = await store.claim("q", 10);
        expect(got.length).to.be.at.most(1);
        order.push(...ids(got));
        await finish(store, got);
      }
      expect(order).to.deep.equal(["a2", "a3", "a1"]);
    });

    it("replays a dead letter whose key is free as claimable at once, with its key", async () => {
      const store = await open();
      await store.enqueue("q", keyed("a1", "a"));
      const [a1] = await store.claim("q", 10);
      await store.deadLetter({ queue: "q", task: "t", message: { ...a1!, attempts: 3 }, error: "e", attempts: 3, diedAt: 1 });
      await store.deadLetters.replay("a1");
      const [again] = await store.claim("q", 10);
      expect(again).to.include({ id: "a1", attempts: 0, orderingKey: "a" });
    });

    it("leaves messages without a key as they were: all claimable at once, first in first out", async () => {
      const store = await open();
      await store.enqueue("q", keyed("a1", "a"));
      await store.claim("q", 10);
      await enqueueAll(store, Array.from({ length: 20 }, (_, i) => keyed(`n${i}`, undefined)));
      expect(ids(await store.claim("q", 100))).to.deep.equal(Array.from({ length: 20 }, (_, i) => `n${i}`));
    });

    it("holds back concurrent enqueues of one key behind the first", async () => {
      const store = await open();
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.enqueue("q", keyed(`a${i}`, "a"))));
      const order: string[] = [];
      for (let i = 0; i < 20; i++) {
        const got = await store.claim("q", 10);
        expect(ids(got)).to.have.length(1);
        order.push(...ids(got));
        await finish(store, got);
      }
      expect(order).to.deep.equal(Array.from({ length: 20 }, (_, i) => `a${i}`));
    });

    it("keeps the lines of long keys holding U+0000-U+0004 apart and in order, each message handed out once", async () => {
      const store = await open();
      // 64 characters or more, under the 200 bytes past which keys are hashed; one is the others' prefix.
      const base = "k".repeat(70);
      const keys = [`${base}\u0000z`, `${base}\u0004\u0005z`, `${base}\u0001`, base, `\u0000${base}`];
      await enqueueAll(store, [1, 2, 3].flatMap((n) => keys.map((key, k) => keyed(`k${k}-${n}`, key))));
      const order: string[] = [];
      for (let round = 0; round < 5; round++) {
        const got = await store.claim("q", 100);
        order.push(...ids(got));
        await finish(store, got);
      }
      const perKey = keys.map((_, k) => order.filter((id) => id.startsWith(`k${k}-`)));
      expect(perKey).to.deep.equal(keys.map((_, k) => [1, 2, 3].map((n) => `k${k}-${n}`)));
      expect(await store.depth("q")).to.equal(0);
    });

    it("keeps keys per queue: the same key in two queues is two keys", async () => {
      const store = await open();
      await store.enqueue("q1", keyed("x1", "k"));
      await store.enqueue("q2", keyed("y1", "k"));
      expect(ids(await store.claim("q1", 10))).to.deep.equal(["x1"]);
      expect(ids(await store.claim("q2", 10))).to.deep.equal(["y1"]);
    });

    it("orders an emitted message by its key in the emit queue, in the same step as the completion", async () => {
      const store = await open();
      await store.enqueue("in", keyed("i1", undefined));
      await store.enqueue("in", keyed("i2", "x"));
      await store.enqueue("out", keyed("o0", "k"));
      const [i1, i2] = await store.claim("in", 10);
      await store.complete("in", i1!.id, { queue: "out", message: keyed("o1", "k") });
      await store.complete("in", i2!.id, { queue: "out", message: keyed("o2", "k") });
      expect(await store.depth("in")).to.equal(0);
      expect(await store.depth("out")).to.equal(3);
      const order: string[] = [];
      for (let i = 0; i < 3; i++) {
        const got = await store.claim("out", 10);
        expect(got).to.have.length(1);
        order.push(...ids(got));
        await finish(store, got, "out");
      }
      expect(order).to.deep.equal(["o0", "o1", "o2"]);
    });

    it("claims heads quickly behind a backlog of held-back messages", async function () {
      this.timeout(60_000);
      const store = await open();
      // 50 keys x 200 messages, interleaved: 50 heads, 9,950 held back.
      await Promise.all(Array.from({ length: 10_000 }, (_, i) => store.enqueue("q", keyed(`m${i}`, `k${i % 50}`))));
      const started = Date.now();
      let claimed = 0;
      while (claimed < 10_000) {
        const got = await store.claim("q", 50);
        expect(got.length).to.be.greaterThan(0);
        claimed += got.length;
        await Promise.all(got.map((m) => store.complete("q", m.id)));
      }
      expect(Date.now() - started).to.be.below(20_000);
    });
  });
}
