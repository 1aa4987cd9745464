import { expect } from "chai";
import type { QueuedMessage } from "../../../src/store/store";
import { message } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);
const keyed = (id: string, key: string | undefined) => message(id, { n: id }, key === undefined ? {} : { orderingKey: key });

describe("PostgresStore: ordering keys", function () {
  this.timeout(20_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  async function open(schema = fixture.schema()) {
    const store = fixture.store({ schema });
    await store.open();
    return store;
  }

  it("hands out a key's messages one at a time, in arrival order; other keys and unkeyed messages go meanwhile", async () => {
    const store = await open();
    for (const [id, key] of [["a1", "a"], ["a2", "a"], ["b1", "b"], ["n1", undefined], ["a3", "a"], ["b2", "b"]] as const) {
      await store.enqueue("q", keyed(id, key));
    }
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a1", "b1", "n1"]);
    expect(await store.claim("q", 10)).to.deep.equal([]);
    await store.complete("q", "a1");
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
    await store.complete("q", "b1");
    await store.complete("q", "a2");
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a3", "b2"]);
  });

  it("claims messages with a key in the same call once they appear in a queue it claimed keyless messages from, another process's too", async () => {
    const schema = fixture.schema();
    const store = await open(schema);
    const other = await open(schema);
    await store.enqueue("q", keyed("n1", undefined));
    expect(ids(await store.claim("q", 10))).to.deep.equal(["n1"]);
    for (const [id, key] of [["k1", "a"], ["k2", "a"], ["n2", undefined]] as const) await other.enqueue("q", keyed(id, key));
    expect(ids(await store.claim("q", 10))).to.deep.equal(["k1", "n2"]);
    expect(await store.claim("q", 10)).to.deep.equal([]);
    await store.complete("q", "k1");
    expect(ids(await store.claim("q", 10))).to.deep.equal(["k2"]);
    await store.complete("q", "k2");
    await other.enqueue("q", keyed("n3", undefined));
    await other.enqueue("q", keyed("k3", "a"));
    expect(ids(await store.claim("q", 1))).to.deep.equal(["n3"]);
    expect(ids(await store.claim("q", 1))).to.deep.equal(["k3"]);
  });

  it("keeps a key blocked while its first message waits for a retry, and while it is claimed again", async () => {
    const store = await open();
    await store.enqueue("q", keyed("a1", "a"));
    await store.enqueue("q", keyed("a2", "a"));
    const [a1] = await store.claim("q", 10);
    await store.retryLater("q", { ...a1, attempts: 1, lastError: "boom" }, Date.now() + 150);
    expect(await store.claim("q", 10)).to.deep.equal([]);
    await new Promise((r) => setTimeout(r, 200));
    const [again] = await store.claim("q", 10);
    expect(again).to.include({ id: "a1", attempts: 1 });
    expect(await store.claim("q", 10)).to.deep.equal([]);
    await store.complete("q", "a1");
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
  });

  it("keeps a key blocked while a message is released, then hands out the same first one", async () => {
    const store = await open();
    await store.enqueue("q", keyed("a1", "a"));
    await store.enqueue("q", keyed("a2", "a"));
    await store.claim("q", 10);
    await store.release("q", ["a1"]);
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a1"]);
  });

  it("unblocks a key when its message is dead-lettered; a replayed letter arrives at the end of the line", async () => {
    const store = await open();
    await store.enqueue("q", keyed("a1", "a"));
    await store.enqueue("q", keyed("a2", "a"));
    const [a1] = await store.claim("q", 10);
    let woken = 0;
    store.watch("q", () => woken++);
    await store.deadLetter({ queue: "q", task: "t", message: a1, error: "e", attempts: 1, diedAt: Date.now() });
    expect(woken).to.equal(1);
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
    await store.deadLetters.replay("a1");
    expect(await store.claim("q", 10)).to.deep.equal([]);
    await store.complete("q", "a2");
    const [replayed] = await store.claim("q", 10);
    expect(replayed).to.include({ id: "a1", attempts: 0, orderingKey: "a" });
  });

  it("wakes the queue's watchers when a completion lets the next message of its key go", async () => {
    const store = await open();
    await store.enqueue("q", keyed("a1", "a"));
    await store.enqueue("q", keyed("a2", "a"));
    await store.claim("q", 10);
    let woken = 0;
    store.watch("q", () => woken++);
    await store.complete("q", "a1");
    expect(woken).to.equal(1);
  });

  it("keeps the rule across processes: one claims a key's first message, the other gets nothing of that key", async () => {
    const schema = fixture.schema();
    const a = await open(schema);
    const b = await open(schema);
    await a.enqueue("q", keyed("k1", "k"));
    await b.enqueue("q", keyed("k2", "k"));
    await a.enqueue("q", keyed("x1", "x"));
    expect(ids(await a.claim("q", 1))).to.deep.equal(["k1"]);
    expect(ids(await b.claim("q", 10))).to.deep.equal(["x1"]);
    await a.complete("q", "k1");
    expect(ids(await b.claim("q", 10))).to.deep.equal(["k2"]);
  });

  it("keeps the rule for concurrent claims of many keys: never two messages of one key out at once, each key in order", async () => {
    const schema = fixture.schema();
    const stores = [await open(schema), await open(schema), await open(schema)];
    const keys = ["a", "b", "c", "d"];
    const perKey = 15;
    for (let i = 0; i < perKey; i++) await Promise.all(keys.map((k) => stores[0].enqueue("q", keyed(`${k}${i}`, k))));
    const out = new Map<string, string>();
    const seen = new Map<string, number>(keys.map((k) => [k, 0]));
    const violations: string[] = [];
    await Promise.all(
      stores.map(async (store) => {
        for (let idle = 0; idle < 30; ) {
          const batch = await store.claim("q", 3);
          if (batch.length === 0) {
            idle++;
            await new Promise((r) => setTimeout(r, 10));
            continue;
          }
          idle = 0;
          for (const m of batch) {
            const key = m.orderingKey!;
            if (out.has(key)) violations.push(`${m.id} while ${out.get(key)} was out`);
            if (m.id !== `${key}${seen.get(key)}`) violations.push(`${m.id} out of order`);
            out.set(key, m.id);
          }
          await new Promise((r) => setTimeout(r, 2));
          for (const m of batch) {
            out.delete(m.orderingKey!);
            seen.set(m.orderingKey!, seen.get(m.orderingKey!)! + 1);
            await store.complete("q", m.id);
          }
        }
      }),
    );
    expect(violations).to.deep.equal([]);
    expect([...seen.values()]).to.deep.equal(keys.map(() => perKey));
  });
});
