import { expect } from "chai";
import { MemoryStore } from "../../src/store/memory/memory-store";
import { describeHistoryConformance } from "./history-conformance";

describeHistoryConformance("memory", () => new MemoryStore());

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
