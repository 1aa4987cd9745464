import { expect } from "chai";
import { GroupIndex, type GroupItem } from "../../src/store/group-index";
import type { GroupRule } from "../../src/store/store";
import { MemoryStore } from "../../src/store/memory/memory-store";

const item = (id: string, groupKey: string, enqueuedAt: number): GroupItem<string> => ({ id, enqueuedAt, groupKey, ref: id });
const ids = (groups: readonly (readonly GroupItem<string>[])[]) => groups.map((g) => g.map((i) => i.id));

describe("GroupIndex", () => {
  it("a batch claim with 50,000 messages waiting goes through what it hands out, not the backlog", () => {
    const index = new GroupIndex<string>();
    const now = Date.now();
    for (let i = 0; i < 50_000; i++) index.add(item(`m${i}`, "", now - 50_000 + i), 0, now);
    const rule: GroupRule = { kind: "batch", maxSize: 100, maxWaitMs: 3_600_000 };
    index.claim(rule, 1, now); // the first claim under a rule orders the keys
    const before = index.steps;
    const claimed = index.claim(rule, 2, now);
    expect(claimed.groups.map((g) => g.length)).to.deep.equal([100, 100]);
    expect(claimed.groups[0]![0]!.id).to.equal("m100");
    expect(claimed.collecting).to.equal(50_000 - 300);
    expect(claimed.nextDueAt).to.equal(now); // more full batches wait
    expect(index.steps - before).to.be.at.most(2 * 100 + 5);
  });

  it("with 10,000 debounced keys, a claim when none is due goes through none of them, and names the earliest due time", () => {
    const index = new GroupIndex<string>();
    const now = Date.now();
    for (let k = 0; k < 10_000; k++) index.add(item(`m${k}`, `k${k}`, now - 10_000 + k), 0, now);
    const rule: GroupRule = { kind: "debounce", periodMs: 60_000, maxSize: 10_000 };
    index.claim(rule, 10, now);
    const before = index.steps;
    const claimed = index.claim(rule, 10, now);
    expect(claimed.groups).to.deep.equal([]);
    expect(claimed.nextDueAt).to.equal(now - 10_000 + 60_000);
    expect(claimed.collecting).to.equal(10_000);
    expect(index.steps - before).to.equal(0);
    // One key due: the claim goes through it alone.
    index.add(item("late", "k5", now - 10_000 + 5), 0, now);
    const later = index.claim(rule, 10, now + 60_000 - 10_000 + 5);
    expect(ids(later.groups)).to.deep.equal([["m0"], ["m1"], ["m2"], ["m3"], ["m4"], ["m5", "late"]]);
  });

  it("keeps its counts through claims, retries, releases and settlements", () => {
    const index = new GroupIndex<string>();
    const now = Date.now();
    const rule: GroupRule = { kind: "batch", maxSize: 2, maxWaitMs: 60_000 };
    for (const [id, key, at] of [["a1", "a", 1], ["a2", "a", 2], ["a3", "a", 3], ["a4", "a", 4], ["b1", "b", 5]] as const) index.add(item(id, key, now - 1_000 + at), 0, now);
    expect(ids(index.claim(rule, 1, now).groups)).to.deep.equal([["a1", "a2"]]);
    expect([index.visible, index.delayedCount, index.size]).to.deep.equal([3, 0, 5]);
    expect(index.retry("a1", "a1@retry", now + 100, now)).to.equal(true);
    expect(index.retry("a2", "a2@retry", now + 100, now)).to.equal(true);
    expect(index.retry("a2", "again", now + 100, now)).to.equal(false); // not claimed any more
    expect([index.visible, index.delayedCount, index.size]).to.deep.equal([3, 2, 5]);
    expect(ids(index.claim(rule, 5, now).groups)).to.deep.equal([["a3", "a4"]]);
    expect(index.release("a4")).to.equal(true);
    expect(index.release("a3")).to.equal(true);
    expect(ids(index.claim(rule, 5, now).groups)).to.deep.equal([["a3", "a4"]]);
    // The retries are visible again at their time, in their place by age, with where they are stored now.
    const due = index.claim(rule, 5, now + 100);
    expect(ids(due.groups)).to.deep.equal([["a1", "a2"]]);
    expect(due.groups[0]!.map((i) => i.ref)).to.deep.equal(["a1@retry", "a2@retry"]);
    for (const id of ["a1", "a2", "a3", "a4"]) expect(index.settle(id)?.id).to.equal(id);
    expect(index.settle("a1")).to.equal(undefined);
    expect([index.visible, index.delayedCount, index.size, index.oldestEnqueuedAt()]).to.deep.equal([1, 0, 1, now - 1_000 + 5]);
  });

  it("ignores an arrival whose place it knows already (an engine told twice)", () => {
    const index = new GroupIndex<string>((ref) => ["w", Number(ref.slice(1))]);
    expect(index.add(item("m1", "", 1))).to.equal(true);
    expect(index.add(item("m1", "", 1))).to.equal(false);
    expect(index.knows("m1")).to.equal(true);
    expect(index.size).to.equal(1);
  });
});

describe("MemoryStore group claims", () => {
  it("hand out a batch quickly with 50,000 events waiting, and count the rest as collecting", async () => {
    const store = new MemoryStore({ maxQueued: 1_000_000 });
    const now = Date.now();
    for (let i = 0; i < 50_000; i++) await store.enqueue("q", { id: `m${i}`, payload: i, attempts: 0, enqueuedAt: now - 50_000 + i, groupKey: "" });
    const rule: GroupRule = { kind: "batch", maxSize: 100, maxWaitMs: 3_600_000 };
    await store.claimGroups("q", rule, 1);
    const started = process.hrtime.bigint();
    for (let k = 0; k < 100; k++) {
      const { groups } = await store.claimGroups("q", rule, 1);
      await store.completeGroup("q", groups[0]!.map((m) => m.id));
    }
    // A generous bound: reading the backlog on each claim took some 10 ms a claim here.
    expect(Number(process.hrtime.bigint() - started) / 1e6).to.be.below(500);
    expect((await store.claimGroups("q", { kind: "batch", maxSize: 100_000, maxWaitMs: 3_600_000 }, 1)).collecting).to.equal(50_000 - 101 * 100);
    expect(await store.depth("q")).to.equal(50_000 - 100 * 100); // the first group is still claimed
    expect((await store.stats("q")).waiting).to.equal(50_000 - 101 * 100);
  });

  it("hand out an event emitted with a delay into a grouped queue once its time comes", async () => {
    const store = new MemoryStore();
    const now = Date.now();
    const rule: GroupRule = { kind: "batch", maxSize: 1, maxWaitMs: 0 };
    await store.enqueue("in", { id: "input", payload: 0, attempts: 0, enqueuedAt: now, groupKey: "" });
    const [[input]] = (await store.claimGroups("in", rule, 1)).groups;
    await store.completeGroup("in", [input!.id], { queue: "grouped", message: { id: "later", payload: 1, attempts: 0, enqueuedAt: now, groupKey: "k", runAt: Date.now() + 150 } });
    expect((await store.claimGroups("grouped", rule, 1)).groups).to.deep.equal([]);
    expect((await store.stats("grouped")).delayed).to.equal(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await store.claimGroups("grouped", rule, 1)).groups.map((g) => g.map((m) => m.id))).to.deep.equal([["later"]]);
  });
});
