import { expect } from "chai";
import { ClaimedMessages } from "../../src/store/memory/claimed-messages";
import { MemoryStore } from "../../src/store/memory/memory-store";
import type { QueuedMessage } from "../../src/store/store";

const message = (id: string): QueuedMessage => ({ id, payload: id, attempts: 0, enqueuedAt: 0 });

describe("ClaimedMessages", () => {
  it("finds, replaces and removes by id, below and above the size where it keeps an index, and back", () => {
    const claimed = new ClaimedMessages();
    const live = new Map<string, QueuedMessage>();
    // Up to 200 claimed (an index), down to 3 (a scan), up again: removals from the middle move the last message.
    const steps = [...Array.from({ length: 200 }, (_, i) => i), ...Array.from({ length: 197 }, (_, i) => -1 - ((i * 37) % 200))];
    for (const step of steps) {
      if (step >= 0) {
        const m = message(`m${step}`);
        claimed.add(m);
        live.set(m.id, m);
      } else {
        const id = `m${-1 - step}`;
        expect(claimed.delete(id)).to.equal(live.delete(id));
      }
      expect(claimed.size).to.equal(live.size);
    }
    for (let i = 0; i < 200; i++) expect(claimed.get(`m${i}`)).to.equal(live.get(`m${i}`));
    expect([...claimed.values()].map((m) => m.id).sort()).to.deep.equal([...live.keys()].sort());
    expect(claimed.delete("m-none")).to.equal(false);
    const again = message([...live.keys()][0]);
    claimed.add(again);
    expect(claimed.size).to.equal(live.size);
    expect(claimed.get(again.id)).to.equal(again);
  });

  it("a memory store with 1,000 claimed messages completes and releases each by id", async () => {
    const store = new MemoryStore({ maxQueued: 10_000 });
    await store.open();
    try {
      for (let i = 0; i < 1_000; i++) await store.enqueue("q", message(`m${i}`));
      const batch = await store.claim("q", 1_000);
      expect(batch).to.have.length(1_000);
      expect((await store.stats("q")).inFlight).to.equal(1_000);
      for (let i = 0; i < 1_000; i += 2) store.completeNow("q", `m${i}`);
      await store.release("q", ["m1", "m3"]);
      expect((await store.stats("q")).inFlight).to.equal(498);
      const again = await store.claim("q", 10);
      expect(again.map((m) => m.id)).to.deep.equal(["m1", "m3"]);
      for (let i = 1; i < 1_000; i += 2) store.completeNow("q", `m${i}`);
      expect(await store.depth("q")).to.equal(0);
    } finally {
      await store.close();
    }
  });
});
