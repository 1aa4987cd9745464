import { expect } from "chai";
import { MemoryStore } from "../../src/store/memory/memory-store";
import { PostgresStore } from "../../src/store/postgres/postgres-store";
import { TimedStore } from "../../src/observe/timed-store";
import { DeliveryLogStore } from "../../src/observe/delivery-log-store";
import type { EmitRecord, Store } from "../../src/store/store";
import { TEST_POSTGRES_URL } from "./postgres/postgres-fixture";

/** The app's two wrappers, one inside the other, as with metrics and the debug delivery log both on. */
function wrapped(store: Store, emitted: string[] = [], writes: string[] = []): Store {
  const logged = new DeliveryLogStore(store, (_queue, _id, emit: readonly EmitRecord[]) => emitted.push(...emit.map((e) => e.message.id)));
  return new TimedStore(logged, (write) => writes.push(write.operation));
}

describe("store wrappers (metrics, debug delivery log)", () => {
  it("keep a PostgreSQL store's capabilities: flow limits decided in its claim, claims that are statements", () => {
    const store = new PostgresStore({ connectionString: TEST_POSTGRES_URL, schema: "wrapper_capabilities" });
    const outer = wrapped(store);
    // Without them the runner would count flow limits per process, not across replicas.
    expect(outer.enforcesFlow).to.equal(true);
    expect(outer.claimsAreStatements).to.equal(true);
    expect(outer.limitedCount).to.be.a("function");
    expect(outer.claimNow).to.equal(undefined);
  });

  it("keep the memory store's synchronous hand-over, still watching what it completes", async () => {
    const emitted: string[] = [];
    const writes: string[] = [];
    const store = new MemoryStore();
    const outer = wrapped(store, emitted, writes);
    await outer.open();
    await outer.enqueue("q", { id: "m1", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    expect(outer.claimNow!("q")?.id).to.equal("m1");
    outer.completeNow!("q", "m1", { queue: "next", message: { id: "child", payload: {}, attempts: 0, enqueuedAt: Date.now() } });
    expect(emitted).to.deep.equal(["child"]);
    expect(writes).to.deep.equal(["enqueue", "complete"]);
    expect(await outer.depth("next")).to.equal(1);
    expect(outer.enforcesFlow).to.equal(undefined);
    await outer.close();
  });

  it("keep an engine's group claims (debounce, batch), and have none when the engine has none", async () => {
    const store = new MemoryStore();
    const outer = wrapped(store);
    await outer.open();
    await outer.enqueue("q", { id: "g1", payload: {}, attempts: 0, enqueuedAt: Date.now() - 1_000, groupKey: "" });
    const claimed = await outer.claimGroups!("q", { kind: "batch", maxSize: 10, maxWaitMs: 10 }, 1);
    expect(claimed.groups.map((g) => g.map((m) => m.id))).to.deep.equal([["g1"]]);
    await outer.completeGroup!("q", ["g1"]);
    expect(await outer.depth("q")).to.equal(0);
    await outer.close();
    const { claimGroups: _claimGroups, completeGroup: _completeGroup, ...without } = Object.getOwnPropertyDescriptors(MemoryStore.prototype);
    const bare = Object.create(Object.getPrototypeOf(MemoryStore.prototype), without) as object;
    const plain = Object.setPrototypeOf(new MemoryStore(), bare) as Store;
    expect(wrapped(plain).claimGroups).to.equal(undefined);
  });
});
