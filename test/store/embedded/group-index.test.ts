import { expect } from "chai";
import { join } from "node:path";
import type { EmbeddedStore } from "../../../src/store/embedded/embedded-store";
import type { GroupRule, QueuedMessage } from "../../../src/store/store";
import { StoreFixture } from "./store-fixture";

const fixture = new StoreFixture("embedded-groups-");
const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);
const grouped = (id: string, groupKey: string, enqueuedAt: number): QueuedMessage => ({ id, payload: { id }, attempts: 0, enqueuedAt, groupKey });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("EmbeddedStore group claims", function () {
  this.timeout(60_000);
  afterEach(() => fixture.cleanup());

  it("with 50,000 events waiting for a batch, a claim reads from disk only the messages it hands out", async () => {
    const store = await fixture.openStore({ dir: join(fixture.tempDir(), "data") });
    const now = Date.now();
    const copies = Array.from({ length: 50_000 }, (_, i) => ({ queue: "q", message: grouped(`m${i}`, "", now - 50_000 + i) }));
    for (let i = 0; i < copies.length; i += 1_000) await store.enqueueAll(copies.slice(i, i + 1_000), { internal: true });
    const rule: GroupRule = { kind: "batch", maxSize: 100, maxWaitMs: 3_600_000 };
    // The queue's first group claim of an opening reads it once.
    expect((await store.claimGroups("q", rule, 1)).groups.map((g) => g.length)).to.deep.equal([100]);
    expect(store.groupMessagesRead).to.equal(50_000 + 100);
    const before = store.groupMessagesRead;
    const started = process.hrtime.bigint();
    for (let k = 0; k < 20; k++) {
      const { groups } = await store.claimGroups("q", rule, 2);
      expect(groups.map((g) => g.length)).to.deep.equal([100, 100]);
      await store.completeGroup("q", groups.flatMap(ids));
    }
    expect(store.groupMessagesRead - before).to.equal(20 * 200);
    // A generous bound: reading the backlog took some 180 ms a claim here.
    expect(Number(process.hrtime.bigint() - started) / 1e6).to.be.below(2_000);
    const none = await store.claimGroups("q", { kind: "batch", maxSize: 100_000, maxWaitMs: 3_600_000 }, 1);
    expect(none.groups).to.deep.equal([]);
    expect(none.collecting).to.equal(50_000 - 100 - 20 * 200);
    expect(store.groupMessagesRead - before).to.equal(20 * 200);
  });

  it("keeps its index through retries, releases, a dead letter's replay and a restart", async () => {
    const dir = join(fixture.tempDir(), "data");
    const first: EmbeddedStore = await fixture.openStore({ dir });
    const now = Date.now();
    const rule: GroupRule = { kind: "batch", maxSize: 2, maxWaitMs: 60_000 };
    for (const [id, key, at] of [["a1", "a", 1], ["a2", "a", 2], ["a3", "a", 3], ["a4", "a", 4], ["b1", "b", 5]] as const) await first.enqueue("q", grouped(id, key, now - 1_000 + at));
    const [group] = (await first.claimGroups("q", rule, 1)).groups;
    expect(ids(group!)).to.deep.equal(["a1", "a2"]);
    for (const m of group!) await first.retryLater("q", { ...m, attempts: 1, lastError: "down" }, Date.now() + 300);
    const second = await first.claimGroups("q", rule, 5);
    expect(second.groups.map(ids)).to.deep.equal([["a3", "a4"]]);
    expect(second.collecting).to.equal(1);
    await first.release("q", ["a4", "a3"]);
    expect((await first.claimGroups("q", rule, 5)).groups.map(ids)).to.deep.equal([["a3", "a4"]]);
    await fixture.closeStore(first); // a3 and a4 claimed, a1 and a2 waiting for their retry

    const again = await fixture.openStore({ dir });
    expect(await again.depth("q")).to.equal(5);
    const afterRestart = await again.claimGroups("q", rule, 5);
    expect(afterRestart.groups.map(ids)).to.deep.equal([["a3", "a4"]]);
    expect(afterRestart.collecting).to.equal(1);
    await sleep(350);
    const retried = await again.claimGroups("q", rule, 5);
    expect(retried.groups.map(ids)).to.deep.equal([["a1", "a2"]]);
    expect(retried.groups[0]!.every((m) => m.attempts === 1 && m.lastError === "down")).to.equal(true);
    await again.completeGroup("q", ["a1", "a2"]);
    // A group dead-lettered, then replayed: back in the index, a group of its own.
    for (const m of afterRestart.groups[0]!) await again.deadLetter({ queue: "q", task: "t", message: m, error: "bad", attempts: 1, diedAt: Date.now() });
    expect(await again.depth("q")).to.equal(1);
    expect(await again.deadLetters.replay("a3")).to.equal(true);
    await again.enqueue("q", grouped("b2", "b", now));
    const last = await again.claimGroups("q", rule, 5);
    expect(last.groups.map(ids)).to.deep.equal([["b1", "b2"]]);
    expect(last.collecting).to.equal(1);
    expect(await again.depth("q")).to.equal(3);
  });

  it("picks up a dead letter another process (the CLI) replayed into a grouped queue while the app runs", async () => {
    const dir = join(fixture.tempDir(), "data");
    const app = await fixture.openStore({ dir });
    const now = Date.now();
    const rule: GroupRule = { kind: "batch", maxSize: 3, maxWaitMs: 60_000 };
    await app.enqueue("q", grouped("dead", "k", now - 3));
    const [[dead]] = (await app.claimGroups("q", { kind: "batch", maxSize: 1, maxWaitMs: 0 }, 1)).groups as [[QueuedMessage]];
    await app.deadLetter({ queue: "q", task: "t", message: dead, error: "e", attempts: 1, diedAt: 1 });
    await app.enqueue("q", grouped("live", "k", now - 2));
    expect((await app.claimGroups("q", rule, 5)).collecting).to.equal(1);

    const cli = await fixture.openStore({ dir, consumer: false });
    expect(await cli.deadLetters.replay("dead")).to.equal(true);
    await fixture.closeStore(cli);
    await app.enqueue("q", grouped("last", "k", now - 1));
    const claimed = await app.claimGroups("q", rule, 5);
    expect(claimed.groups.map(ids)).to.deep.equal([["dead", "live", "last"]]);
    expect(claimed.collecting).to.equal(0);
  });

  it("hands out an event emitted with a delay into a grouped queue once its time comes", async () => {
    const store = await fixture.openStore({ dir: join(fixture.tempDir(), "data") });
    const now = Date.now();
    const rule: GroupRule = { kind: "batch", maxSize: 1, maxWaitMs: 0 };
    await store.enqueue("in", grouped("input", "", now));
    await store.claimGroups("grouped", rule, 1); // the grouped queue's index exists before the emit
    const [[input]] = (await store.claimGroups("in", rule, 1)).groups as [[QueuedMessage]];
    await store.completeGroup("in", [input.id], { queue: "grouped", message: { ...grouped("later", "k", now), runAt: Date.now() + 150 } });
    expect((await store.claimGroups("grouped", rule, 1)).groups).to.deep.equal([]);
    await sleep(200);
    expect((await store.claimGroups("grouped", rule, 1)).groups.map(ids)).to.deep.equal([["later"]]);
  });
});
