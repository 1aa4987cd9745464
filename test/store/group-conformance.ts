import { expect } from "chai";
import type { GroupRule, QueuedMessage, Store } from "../../src/store/store";

const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

function grouped(id: string, groupKey: string, enqueuedAt: number): QueuedMessage {
  return { id, payload: { id }, attempts: 0, enqueuedAt, groupKey };
}

const debounce = (periodMs: number, maxWaitMs?: number): GroupRule => (maxWaitMs === undefined ? { kind: "debounce", periodMs, maxSize: 10_000 } : { kind: "debounce", periodMs, maxWaitMs, maxSize: 10_000 });

/**
 * claimGroups and completeGroup (GroupRule in src/store/store.ts), for engines that have them:
 * run from storeConformance, skipped on an engine without. Times are set through `enqueuedAt`.
 */
export function groupConformance(open: () => Promise<Store>): void {
  describe("debounce and batch groups", () => {
    /** The store, or the test skipped: an engine without groups makes apps refuse such tasks instead. */
    async function groupStore(test: Mocha.Context): Promise<Store & Required<Pick<Store, "claimGroups" | "completeGroup">>> {
      const store = await open();
      if (store.claimGroups === undefined || store.completeGroup === undefined) test.skip();
      return store as Store & Required<Pick<Store, "claimGroups" | "completeGroup">>;
    }

    it("debounce: a key is due periodMs after its newest message; a key still receiving waits, counted as collecting, with its due time", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      await store.enqueue("q", grouped("a1", "a", now - 3_000));
      await store.enqueue("q", grouped("a2", "a", now - 2_000));
      await store.enqueue("q", grouped("b1", "b", now - 3_000));
      await store.enqueue("q", grouped("b2", "b", now));
      const claimed = await store.claimGroups("q", debounce(1_000), 10);
      expect(claimed.groups.map(ids)).to.deep.equal([["a1", "a2"]]);
      expect(claimed.collecting).to.equal(2);
      expect(claimed.nextDueAt).to.be.within(now + 990, now + 1_010);
    });

    it("debounce: maxWaitMs makes a key due however recent its newest message", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      await store.enqueue("q", grouped("a1", "a", now - 2_000));
      await store.enqueue("q", grouped("a2", "a", now));
      expect((await store.claimGroups("q", debounce(1_000), 10)).groups).to.deep.equal([]);
      expect((await store.claimGroups("q", debounce(1_000, 1_500), 10)).groups.map(ids)).to.deep.equal([["a1", "a2"]]);
    });

    it("debounce: a key with a claimed group hands out nothing more until that group completes", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      await store.enqueue("q", grouped("a1", "a", now - 5_000));
      const first = await store.claimGroups("q", debounce(100), 10);
      expect(first.groups.map(ids)).to.deep.equal([["a1"]]);
      await store.enqueue("q", grouped("a2", "a", now - 4_000));
      const during = await store.claimGroups("q", debounce(100), 10);
      expect(during.groups).to.deep.equal([]);
      expect(during.collecting).to.equal(1);
      await store.completeGroup("q", ["a1"]);
      expect((await store.claimGroups("q", debounce(100), 10)).groups.map(ids)).to.deep.equal([["a2"]]);
    });

    it("batch: a full batch is due at once, several per key, oldest first; a partial one after maxWaitMs", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      for (let i = 0; i < 25; i++) await store.enqueue("q", grouped(`m${String(i).padStart(2, "0")}`, "k", now - 100 + i));
      const rule: GroupRule = { kind: "batch", maxSize: 10, maxWaitMs: 5_000 };
      const claimed = await store.claimGroups("q", rule, 10);
      expect(claimed.groups.map((g) => g.length)).to.deep.equal([10, 10]);
      expect(claimed.groups[0]![0]!.id).to.equal("m00");
      expect(claimed.groups[1]![0]!.id).to.equal("m10");
      expect(claimed.collecting).to.equal(5);
      expect(claimed.nextDueAt).to.equal(now - 100 + 20 + 5_000);
      const late: GroupRule = { kind: "batch", maxSize: 10, maxWaitMs: 50 };
      expect((await store.claimGroups("q", late, 10)).groups.map(ids)).to.deep.equal([["m20", "m21", "m22", "m23", "m24"]]);
    });

    it("hands out at most `limit` groups, those of the oldest messages first; the rest are due now", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      await store.enqueue("q", grouped("b1", "b", now - 2_000));
      await store.enqueue("q", grouped("a1", "a", now - 3_000));
      const claimed = await store.claimGroups("q", debounce(100), 1);
      expect(claimed.groups.map(ids)).to.deep.equal([["a1"]]);
      expect(claimed.collecting).to.equal(1);
      expect(claimed.nextDueAt).to.be.at.most(Date.now());
    });

    it("completeGroup removes every message of the group and appends its emit in the same step", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      for (const id of ["a1", "a2", "a3"]) await store.enqueue("q", grouped(id, "a", now - 1_000));
      const [group] = (await store.claimGroups("q", { kind: "batch", maxSize: 3, maxWaitMs: 10 }, 1)).groups;
      await store.completeGroup("q", ids(group!), { queue: "out", message: { id: "sum", payload: 3, attempts: 0, enqueuedAt: now } });
      expect(await store.depth("q")).to.equal(0);
      expect(ids(await store.claim("out", 10))).to.deep.equal(["sum"]);
    });

    it("debounce: a key whose burst waits for a retry is busy; what arrives meanwhile joins the retried burst", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      // A delayed value that never failed (attempts 0), emitted by a run: it does not hold its key.
      await store.enqueue("q", grouped("c0", "c", now - 2_000));
      const [first] = (await store.claimGroups("q", debounce(100), 10)).groups;
      expect(ids(first!)).to.deep.equal(["c0"]);
      await store.completeGroup("q", ["c0"], { queue: "q", message: { ...grouped("b1", "b", now - 1_000), runAt: now + 60_000 } });
      await store.enqueue("q", grouped("a1", "a", now - 2_000));
      const [burst] = (await store.claimGroups("q", debounce(100), 10)).groups;
      expect(ids(burst!)).to.deep.equal(["a1"]);
      await store.retryLater("q", { ...burst![0]!, attempts: 1, lastError: "down" }, Date.now() + 300);
      // A newer event of the key, due by its period, waits for the retry rather than running first.
      await store.enqueue("q", grouped("a2", "a", Date.now() - 1_000));
      await store.enqueue("q", grouped("b2", "b", Date.now() - 1_000));
      expect((await store.claimGroups("q", debounce(100), 10)).groups.map(ids)).to.deep.equal([["b2"]]);
      await new Promise((resolve) => setTimeout(resolve, 350));
      const [joined] = (await store.claimGroups("q", debounce(100), 10)).groups;
      expect(ids(joined!)).to.deep.equal(["a1", "a2"]);
    });

    it("a group retried comes back whole once due; a released group at once", async function () {
      const store = await groupStore(this);
      const now = Date.now();
      const rule: GroupRule = { kind: "batch", maxSize: 2, maxWaitMs: 10 };
      for (const id of ["a1", "a2"]) await store.enqueue("q", grouped(id, "a", now - 1_000));
      const [group] = (await store.claimGroups("q", rule, 1)).groups;
      for (const m of group!) await store.retryLater("q", { ...m, attempts: 1, lastError: "down" }, Date.now() + 150);
      expect((await store.claimGroups("q", rule, 1)).groups).to.deep.equal([]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const [again] = (await store.claimGroups("q", rule, 1)).groups;
      expect(ids(again!).sort()).to.deep.equal(["a1", "a2"]);
      expect(again!.every((m) => m.attempts === 1 && m.groupKey === "a")).to.equal(true);
      await store.release("q", ids(again!));
      expect(ids((await store.claimGroups("q", rule, 1)).groups[0]!).sort()).to.deep.equal(["a1", "a2"]);
    });
  });
}
