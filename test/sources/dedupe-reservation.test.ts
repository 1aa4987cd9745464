import { expect } from "chai";
import { MemoryStore } from "../../src/index";
import { Deduplicator } from "../../src/sources/webhook/dedupe";

/** Two deduplicators on one state stand for two processes sharing a store. */
describe("deduplication across processes sharing a store", () => {
  let store: MemoryStore;
  beforeEach(async () => {
    store = new MemoryStore();
    await store.open();
  });
  afterEach(() => store.close());

  const pair = (reservationMs?: number) => [new Deduplicator(store.state("d"), 60_000, reservationMs), new Deduplicator(store.state("d"), 60_000, reservationMs)] as const;

  it("a copy reaching the other process while the first is storing waits, and is the first's duplicate", async () => {
    const [a, b] = pair();
    let release!: () => void;
    const slow = new Promise<void>((r) => (release = r));
    const stored: string[] = [];
    const first = a.run("k", "e1", async () => {
      await slow;
      stored.push("e1");
    });
    await new Promise((r) => setTimeout(r, 10));
    const second = b.run("k", "e2", async () => void stored.push("e2"));
    await new Promise((r) => setTimeout(r, 50));
    release();
    expect(await first).to.equal(undefined);
    expect(await second).to.deep.equal({ id: "e1" });
    expect(stored).to.deep.equal(["e1"]);
  });

  it("when the first process fails to store, the waiting copy is stored in its place", async () => {
    const [a, b] = pair();
    let fail!: (error: Error) => void;
    const failing = new Promise<void>((_, reject) => (fail = reject));
    const first = a.run("k", "e1", () => failing);
    await new Promise((r) => setTimeout(r, 10));
    const stored: string[] = [];
    const second = b.run("k", "e2", async () => void stored.push("e2"));
    fail(new Error("store down"));
    await first.then(
      () => expect.fail("the first copy should have failed"),
      (error: Error) => expect(error.message).to.equal("store down"),
    );
    expect(await second).to.equal(undefined);
    expect(stored).to.deep.equal(["e2"]);
    expect(await a.run("k", "e3", async () => expect.fail("stored twice"))).to.deep.equal({ id: "e2" });
  });

  it("with an awaited outcome, a copy is pending until the outcome is settled or the wait is over", async () => {
    const waiting = new Deduplicator(store.state("d"), 60_000, undefined, 200);
    expect(await waiting.run("k", "e1", async () => undefined)).to.equal(undefined);
    const pending = await waiting.run("k", "e2", async () => expect.fail("stored twice"));
    expect(pending?.id).to.equal("e1");
    expect(pending?.pendingUntil).to.be.above(Date.now());
    await waiting.settled("k", "e1");
    expect(await waiting.run("k", "e3", async () => expect.fail("stored twice"))).to.deep.equal({ id: "e1" });
    expect(await waiting.run("k2", "f1", async () => undefined)).to.equal(undefined);
    // A process that died while its sender waited: once the wait is over, copies are plain duplicates.
    await new Promise((r) => setTimeout(r, 2_300));
    expect(await waiting.run("k2", "f2", async () => expect.fail("stored twice"))).to.deep.equal({ id: "f1" });
   }).timeout(10_000);

  it("a reservation left by a process that died expires, and the next copy is stored", async () => {
    await store.state("d").setIfAbsent("k", { storing: "e-dead" }, { ttlMs: 100 });
    const [, b] = pair(100);
    const stored: string[] = [];
    const started = Date.now();
    expect(await b.run("k", "e2", async () => void stored.push("e2"))).to.equal(undefined);
    expect(stored).to.deep.equal(["e2"]);
    expect(Date.now() - started).to.be.at.least(80);
  });
});
