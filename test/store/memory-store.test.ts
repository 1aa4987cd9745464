import { expect } from "chai";
import { MemoryStore } from "../../src/store/memory/memory-store";
import { storeConformance } from "./store-conformance";

storeConformance("memory", { create: (limits) => new MemoryStore(limits) });

describe("MemoryStore ordering keys", () => {
  it("claims and completes a backlog of 100,000 keyed messages in linear time", async function () {
    this.timeout(30_000);
    const store = new MemoryStore({ maxQueued: 1_000_000 });
    await store.open();
    try {
      // 100 keys, interleaved: 100 claimable heads, 99,900 held back behind them.
      for (let i = 0; i < 100_000; i++) {
        await store.enqueue("q", { id: `m${i}`, payload: i, attempts: 0, enqueuedAt: 0, orderingKey: `k${i % 100}` });
      }
      const started = Date.now();
      const lastOfKey = new Map<string, number>();
      let done = 0;
      while (done < 100_000) {
        const got = await store.claim("q", 16);
        expect(got.length).to.equal(16);
        for (const m of got) {
          const n = m.payload as number;
          expect(n).to.be.greaterThan(lastOfKey.get(m.orderingKey!) ?? -1);
          lastOfKey.set(m.orderingKey!, n);
          await store.complete("q", m.id);
        }
        done += got.length;
      }
      // A claim that rescanned the held-back messages would take minutes here.
      expect(Date.now() - started).to.be.below(5_000);
      expect(await store.depth("q")).to.equal(0);
    } finally {
      await store.close();
    }
  });
});
