import { expect } from "chai";
import pg from "pg";
import { message } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";
import type { QueuedMessage } from "../../../src/store/store";
import { MAX_PERIOD_MS } from "../../../src/app/flow/flow-options";

const keyOf = (m: QueuedMessage) => `k${Number(m.id.slice(1)) % 5}`;

describe("PostgresStore: claims under flow limits", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("three stores claiming at once never hold more than the limit per concurrency key", async () => {
    const schema = fixture.schema();
    const stores = [fixture.store({ schema }), fixture.store({ schema }), fixture.store({ schema })];
    for (const s of stores) await s.open();
    const all: QueuedMessage[] = [];
    for (let i = 0; i < 200; i++) all.push(message(`m${i}`, { i }, { concurrencyKey: `k${i % 5}` }));
    await stores[0].enqueueAll(all.map((m) => ({ queue: "q", message: m })));
    // Everyone claims as much as it can, at the same moment, many times.
    const held = new Map<string, string>();
    for (let round = 0; round < 10; round++) {
      const got = await Promise.all(stores.map((s) => s.claim("q", 50, { concurrency: 3 })));
      for (const m of got.flat()) held.set(m.id, keyOf(m));
    }
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT concurrency_key AS k, count(*)::int AS n FROM "${schema}".messages WHERE claimed_by IS NOT NULL GROUP BY 1 ORDER BY 1`);
      expect(rows).to.deep.equal(["k0", "k1", "k2", "k3", "k4"].map((k) => ({ k, n: 3 })));
    } finally {
      await client.end();
    }
    expect(held.size).to.equal(15);
    // A completion frees its slot: exactly one more of that key can be claimed.
    const first = [...held.keys()][0];
    await Promise.all(stores.map(async (s) => s.complete("q", first)));
    const again = (await Promise.all(stores.map((s) => s.claim("q", 50, { concurrency: 3 })))).flat();
    expect(again.map(keyOf)).to.deep.equal([held.get(first)]);
  });

  it("a rate limit counts starts over the window across stores, and says when the window has room", async () => {
    const schema = fixture.schema();
    const a = fixture.store({ schema });
    const b = fixture.store({ schema });
    await a.open();
    await b.open();
    await a.enqueueAll(Array.from({ length: 30 }, (_, i) => ({ queue: "q", message: message(`m${i}`, { i }, { rateKey: "" }) })));
    let waitAt = 0;
    const flow = { rate: { limit: 10, periodMs: 1_000 }, rateWait: (at: number) => (waitAt = at) };
    const started = Date.now();
    const first = [...(await a.claim("q", 8, flow)), ...(await b.claim("q", 8, flow)), ...(await a.claim("q", 8, flow))];
    expect(first).to.have.length(10);
    expect(waitAt).to.be.greaterThan(started + 500);
    // The window is kept 10% longer (at most 100 ms) for the reply's trip: see PostgresStore.claimLimited.
    expect(waitAt).to.be.at.most(Date.now() + 1_100);
    for (const m of first) await b.complete("q", m.id);
    expect(await b.claim("q", 8, flow)).to.have.length(0);
    expect(await a.limitedCount("q", flow)).to.equal(20);
    // A sliding window: the first batch's starts leave it first, then the second's.
    await new Promise((r) => setTimeout(r, Math.max(0, waitAt - Date.now()) + 20));
    const next = await b.claim("q", 20, flow);
    expect(next.length).to.be.within(8, 10);
    await new Promise((r) => setTimeout(r, 300));
    expect(next.length + (await b.claim("q", 20, flow)).length).to.equal(10);
  });

  it("messages without a concurrency key (queued before the task had a limit) count in its shared group, across stores", async () => {
    const schema = fixture.schema();
    const stores = [fixture.store({ schema }), fixture.store({ schema })];
    for (const s of stores) await s.open();
    // Half queued by the app before it had the limit (no key), half after (the shared group "").
    await stores[0].enqueueAll(Array.from({ length: 20 }, (_, i) => ({ queue: "q", message: message(`m${i}`, { i }, i % 2 === 0 ? {} : { concurrencyKey: "" }) })));
    const held = new Set<string>();
    for (let round = 0; round < 5; round++) {
      for (const m of (await Promise.all(stores.map((s) => s.claim("q", 10, { concurrency: 2 })))).flat()) held.add(m.id);
    }
    expect([...held]).to.have.length(2);
  });

  it("a claimed message keeps its flow keys: its dead letter, replayed, waits for its concurrency key and counts in its rate key", async () => {
    const store = fixture.store();
    await store.open();
    const flow = { concurrency: 1, rate: { limit: 1, periodMs: 60_000 } };
    const keys = { concurrencyKey: "k", rateKey: "r1" };
    await store.enqueueAll(["a", "b"].map((id, i) => ({ queue: "q", message: message(id, {}, { ...keys, rateKey: `r${i + 1}` }) })));
    const [a] = await store.claim("q", 10, flow);
    expect(a).to.deep.include({ id: "a", ...keys });
    await store.deadLetter({ queue: "q", message: { ...a!, attempts: 1 }, task: "t", error: "failed", attempts: 1, diedAt: Date.now() });
    expect((await store.deadLetters.get("a"))!.message).to.deep.include(keys);
    // b holds key k; the replayed a waits for it, and its rate key r1 has had its start.
    expect((await store.claim("q", 10, flow)).map((m) => m.id)).to.deep.equal(["b"]);
    expect(await store.deadLetters.replay("a")).to.equal(true);
    expect(await store.claim("q", 10, flow)).to.deep.equal([]);
    await store.complete("q", "b");
    expect(await store.claim("q", 10, flow)).to.deep.equal([]);
    expect(await store.claim("q", 10, { concurrency: 1 })).to.have.length(1);
  });

  it("claims under the largest limits a task accepts, past PostgreSQL's integers", async () => {
    const store = fixture.store();
    await store.open();
    await store.enqueueAll(["a", "b", "c"].map((id) => ({ queue: "q", message: message(id, {}, { rateKey: "", concurrencyKey: "" }) })));
    // The longest period, widened for the reply's trip; limits of 2^31 and more; a claim of as many.
    const longest = { rate: { limit: 1, periodMs: MAX_PERIOD_MS } };
    expect((await store.claim("q", 5, longest)).map((m) => m.id)).to.deep.equal(["a"]);
    expect(await store.claim("q", 5, longest)).to.deep.equal([]);
    expect(await store.limitedCount("q", longest)).to.equal(2);
    const huge = { concurrency: 2 ** 40, rate: { limit: 2 ** 31, periodMs: 1_000 } };
    expect((await store.claim("q", 2 ** 31, huge)).map((m) => m.id)).to.deep.equal(["b", "c"]);
    expect(await store.limitedCount("q", huge)).to.equal(0);
  });

  it("a delayed message is not claimed before its time, and counts as delayed", async () => {
    const store = fixture.store();
    await store.open();
    const runAt = Date.now() + 700;
    await store.enqueue("q", message("later", {}, { runAt }));
    expect(await store.claim("q", 10)).to.have.length(0);
    expect((await store.stats("q")).delayed).to.equal(1);
    await new Promise((r) => setTimeout(r, runAt - Date.now() + 10));
    expect((await store.claim("q", 10)).map((m) => m.id)).to.deep.equal(["later"]);
  });
});
