import { expect } from "chai";
import pg from "pg";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store";
import type { GroupRule, QueuedMessage } from "../../../src/store/store";
import { message, rejection } from "../store-conformance";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);
const debounce = (periodMs: number, maxWaitMs?: number, maxSize = 10_000): GroupRule => ({ kind: "debounce", periodMs, maxWaitMs, maxSize });
const batch = (maxSize: number, maxWaitMs: number): GroupRule => ({ kind: "batch", maxSize, maxWaitMs });

/** A message of group `key` that entered the queue `ago` ms before now. */
function grouped(id: string, key: string, ago: number): QueuedMessage {
  return message(id, { id }, { groupKey: key, enqueuedAt: Date.now() - ago });
}

describe("PostgresStore: debounced and batched groups", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  async function open(options: Parameters<PostgresFixture["store"]>[0] = {}): Promise<PostgresStore> {
    const store = fixture.store(options);
    await store.open();
    return store;
  }

  async function put(store: PostgresStore, queue: string, messages: readonly QueuedMessage[]): Promise<void> {
    await store.enqueueAll(messages.map((m) => ({ queue, message: m })));
  }

  async function sql(schema: string, text: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> {
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      return (await client.query(text.replaceAll("$schema", `"${schema}"`), values)).rows;
    } finally {
      await client.end();
    }
  }

  describe("debounce", () => {
    it("hands out a key's group once periodMs passed since its newest message, whole and oldest first", async () => {
      const store = await open();
      const start = Date.now();
      await put(store, "q", [grouped("a1", "a", 5_000), grouped("b1", "b", 3_000), grouped("a2", "a", 1_000), grouped("b2", "b", 100), grouped("a3", "a", 600)]);
      const first = await store.claimGroups("q", debounce(500), 10);
      expect(first.groups.map(ids)).to.deep.equal([["a1", "a2", "a3"]]);
      expect(first.groups[0].map((m) => m.groupKey)).to.deep.equal(["a", "a", "a"]);
      expect(first.groups[0][2].payload).to.deep.equal({ id: "a3" });
      // b's newest entered 100 ms before: due 400 ms later.
      expect(first.collecting).to.equal(2);
      expect(first.nextDueAt).to.be.within(start - 100 + 500 - 50, Date.now() - 100 + 500 + 50);
      expect(await store.claimGroups("q", debounce(500), 10)).to.deep.include({ groups: [], collecting: 2 });
      await new Promise((r) => setTimeout(r, Math.max(0, first.nextDueAt! - Date.now()) + 10));
      expect((await store.claimGroups("q", debounce(500), 10)).groups.map(ids)).to.deep.equal([["b1", "b2"]]);
    });

    it("hands out a group maxWaitMs after its oldest message under a steady trickle", async () => {
      const store = await open();
      await put(store, "q", [grouped("t1", "t", 2_000), grouped("t2", "t", 1_000), grouped("t3", "t", 10)]);
      expect((await store.claimGroups("q", debounce(500), 10)).groups).to.deep.equal([]);
      const withMaxWait = await store.claimGroups("q", debounce(500, 1_500), 10);
      expect(withMaxWait.groups.map(ids)).to.deep.equal([["t1", "t2", "t3"]]);
      expect(withMaxWait.nextDueAt).to.equal(undefined);
      expect(withMaxWait.collecting).to.equal(0);
    });

    it("runs one group of a key at a time: what arrives meanwhile waits for the group to finish", async () => {
      const store = await open();
      await put(store, "q", [grouped("k1", "k", 2_000), grouped("k2", "k", 1_000)]);
      const first = await store.claimGroups("q", debounce(100), 10);
      expect(first.groups.map(ids)).to.deep.equal([["k1", "k2"]]);
      await put(store, "q", [grouped("k3", "k", 1_000), grouped("other", "o", 1_000)]);
      const meanwhile = await store.claimGroups("q", debounce(100), 10);
      expect(meanwhile.groups.map(ids)).to.deep.equal([["other"]]);
      // k3 is due by time but its key runs: it waits, counted as collecting, with no time of its own.
      expect(meanwhile.collecting).to.equal(1);
      expect(meanwhile.nextDueAt).to.equal(undefined);
      let woken = 0;
      store.watch("q", () => woken++);
      await store.completeGroup("q", ids(first.groups[0]));
      expect(woken).to.be.greaterThan(0);
      expect((await store.claimGroups("q", debounce(100), 10)).groups.map(ids)).to.deep.equal([["k3"]]);
    });

    it("hands out the oldest maxSize of a large group; the rest waits for it", async () => {
      const store = await open();
      await put(store, "q", ["m1", "m2", "m3", "m4", "m5"].map((id) => grouped(id, "k", 1_000)));
      const first = await store.claimGroups("q", debounce(100, undefined, 3), 10);
      expect(first.groups.map(ids)).to.deep.equal([["m1", "m2", "m3"]]);
      expect(first.collecting).to.equal(2);
      expect((await store.claimGroups("q", debounce(100, undefined, 3), 10)).groups).to.deep.equal([]);
      await store.completeGroup("q", ["m1", "m2", "m3"]);
      expect((await store.claimGroups("q", debounce(100, undefined, 3), 10)).groups.map(ids)).to.deep.equal([["m4", "m5"]]);
    });
    it("hands out a group at once when it holds maxSize messages, however recent", async () => {
      const store = await open();
      await put(store, "q", ["m1", "m2", "m3"].map((id) => grouped(id, "k", 0)));
      expect((await store.claimGroups("q", debounce(60_000, undefined, 4), 10)).groups).to.deep.equal([]);
      expect((await store.claimGroups("q", debounce(60_000, undefined, 3), 10)).groups.map(ids)).to.deep.equal([["m1", "m2", "m3"]]);
    });

    it("orders by enqueuedAt, not by insertion, and takes messages without a key as the task's group", async () => {
      const store = await open();
      // Queued before the task was debounced: no group key.
      await put(store, "q", [message("plain", {}, { enqueuedAt: Date.now() - 500 }), grouped("late", "k", 1_000), grouped("early", "k", 2_000), grouped("keyless", "", 400)]);
      const { groups } = await store.claimGroups("q", debounce(100), 10);
      expect(groups.map(ids)).to.deep.equal([["early", "late"], ["plain", "keyless"]]);
      expect(groups[1].map((m) => m.groupKey)).to.deep.equal([undefined, ""]);
    });
  });

  describe("batch", () => {
    it("hands out full groups at once and a partial one maxWaitMs after its oldest, several of a key at a time", async () => {
      const store = await open();
      await put(store, "q", ["m1", "m2", "m3", "m4", "m5", "m6", "m7"].map((id) => grouped(id, "k", 100)));
      const before = Date.now();
      const first = await store.claimGroups("q", batch(3, 1_000), 1);
      expect(first.groups.map(ids)).to.deep.equal([["m1", "m2", "m3"]]);
      // The second full group is due now (the limit held it back); the partial one later.
      expect(first.nextDueAt).to.be.at.most(Date.now());
      expect(first.collecting).to.equal(4);
      const second = await store.claimGroups("q", batch(3, 1_000), 10);
      expect(second.groups.map(ids)).to.deep.equal([["m4", "m5", "m6"]]);
      expect(second.collecting).to.equal(1);
      expect(second.nextDueAt).to.be.within(before - 100 + 1_000 - 50, Date.now() - 100 + 1_000 + 50);
      const late = await store.claimGroups("q", batch(3, 200), 10);
      expect(late.groups.map(ids)).to.deep.equal([]);
      await new Promise((r) => setTimeout(r, 150));
      const third = await store.claimGroups("q", batch(3, 200), 10);
      expect(third.groups.map(ids)).to.deep.equal([["m7"]]);
      expect(third.collecting).to.equal(0);
      expect(third.nextDueAt).to.equal(undefined);
    });

    it("with a limit of 0 claims nothing and tells when to ask again", async () => {
      const store = await open();
      await put(store, "q", [grouped("m1", "k", 300), grouped("m2", "k", 300), grouped("m3", "k", 100), grouped("n1", "n", 200)]);
      const result = await store.claimGroups("q", batch(2, 1_000), 0);
      expect(result.groups).to.deep.equal([]);
      // k's full group is due now; n's group 800 ms from now.
      expect(result.nextDueAt).to.be.at.most(Date.now());
      expect(result.collecting).to.equal(4);
      expect(await store.stats("q")).to.include({ inFlight: 0, waiting: 4 });
    });

    it("keeps keys apart and hands groups out in the order of their oldest message", async () => {
      const store = await open();
      await put(store, "q", [grouped("b1", "b", 50), grouped("a1", "a", 50), grouped("b2", "b", 50), grouped("a2", "a", 50), grouped("c1", "c", 50)]);
      const claimed = await store.claimGroups("q", batch(2, 60_000), 10);
      expect(claimed.groups.map(ids)).to.deep.equal([["b1", "b2"], ["a1", "a2"]]);
      expect(claimed.collecting).to.equal(1);
    });
  });

  it("two stores claiming at once never get the same message, and a debounce key goes whole to one of them", async () => {
    const schema = fixture.schema();
    const a = await open({ schema });
    const b = await open({ schema });
    const all: QueuedMessage[] = [];
    for (let i = 0; i < 30; i++) for (let k = 0; k < 20; k++) all.push(grouped(`d${k}-${i}`, `k${k}`, 1_000));
    await put(a, "debounced", all);
    const byStore = new Map<string, string>();
    const groups: QueuedMessage[][] = [];
    for (let round = 0; round < 8; round++) {
      const got = await Promise.all([a, b, a, b].map((s) => s.claimGroups("debounced", debounce(100), 3)));
      got.forEach((r, i) => {
        for (const group of r.groups) {
          groups.push(group);
          for (const m of group) {
            expect(byStore.has(m.id), `${m.id} handed out twice`).to.equal(false);
            byStore.set(m.id, i % 2 === 0 ? "a" : "b");
          }
        }
      });
    }
    expect(byStore.size).to.equal(600);
    expect(groups).to.have.length(20);
    for (const group of groups) {
      expect(new Set(group.map((m) => m.groupKey)).size).to.equal(1);
      expect(group).to.have.length(30);
    }
    expect(new Set(byStore.values()).size).to.equal(2);

    const batched: QueuedMessage[] = [];
    for (let i = 0; i < 300; i++) batched.push(grouped(`b${i}`, `k${i % 3}`, 0));
    await put(a, "batched", batched);
    const seen = new Set<string>();
    for (let round = 0; round < 10; round++) {
      const got = await Promise.all([a, b, a, b].map((s) => s.claimGroups("batched", batch(7, 60_000), 2)));
      for (const group of got.flatMap((r) => r.groups)) {
        expect(group.length).to.equal(7);
        for (const m of group) {
          expect(seen.has(m.id), `${m.id} handed out twice`).to.equal(false);
          seen.add(m.id);
        }
      }
    }
    // 100 per key: 14 full groups of 7 each, 2 left collecting per key.
    expect(seen.size).to.equal(3 * 14 * 7);
    expect((await a.claimGroups("batched", batch(7, 60_000), 10)).collecting).to.equal(6);
  });

  it("frees the groups of a store that died when its leases end: another takes them whole, the attempt counted", async () => {
    const schema = fixture.schema();
    // Not a consumer: it claims but never renews, like a process killed after claiming.
    const dead = await open({ schema, consumer: false, leaseMs: 400 });
    const other = await open({ schema, leaseMs: 400 });
    await put(dead, "q", [grouped("m1", "k", 1_000), grouped("m2", "k", 1_000)]);
    expect((await dead.claimGroups("q", debounce(100), 10)).groups.map(ids)).to.deep.equal([["m1", "m2"]]);
    expect((await other.claimGroups("q", debounce(100), 10)).groups).to.deep.equal([]);
    let again: QueuedMessage[][] = [];
    await until(async () => (again = (await other.claimGroups("q", debounce(100), 10)).groups).length > 0, 5_000);
    expect(again.map(ids)).to.deep.equal([["m1", "m2"]]);
    expect(again[0].map((m) => m.attempts)).to.deep.equal([1, 1]);
    // The dead one's late completion changes nothing: the other run emits.
    await dead.completeGroup("q", ["m1", "m2"], { queue: "out", message: message("late") });
    expect(await other.depth("out")).to.equal(0);
    expect(await other.depth("q")).to.equal(2);
  });

  it("renews the leases of the groups it holds", async () => {
    const schema = fixture.schema();
    const runner = await open({ schema, leaseMs: 300 });
    const other = await open({ schema, leaseMs: 300 });
    await put(runner, "q", [grouped("m1", "k", 1_000)]);
    expect((await runner.claimGroups("q", debounce(100), 1)).groups).to.have.length(1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await other.reap()).to.equal(0);
    expect((await other.claimGroups("q", debounce(100), 1)).groups).to.deep.equal([]);
  });

  describe("completeGroup", () => {
    it("removes the group and appends its output in one step", async () => {
      const store = await open();
      await put(store, "q", [grouped("m1", "k", 1_000), grouped("m2", "k", 1_000), grouped("x", "other", 0)]);
      const { groups } = await store.claimGroups("q", debounce(100), 10);
      await store.completeGroup("q", ids(groups[0]), [
        { queue: "out", message: message("o1", { n: 2 }) },
        { queue: "audit", message: message("o1", { n: 2 }) },
      ]);
      expect(await store.depth("q")).to.equal(1);
      expect(ids(await store.claim("out", 10))).to.deep.equal(["o1"]);
      expect(ids(await store.claim("audit", 10))).to.deep.equal(["o1"]);
      expect(await store.queueNames()).to.deep.equal(["audit", "out", "q"]);
    });

    it("writes nothing when the statement fails: the group comes back whole, no output", async () => {
      const schema = fixture.schema();
      const store = await open({ schema });
      // A trigger that fails the output's insert, inside the completion's statement.
      await sql(schema, `CREATE FUNCTION $schema.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.id = 'boom' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
      await sql(schema, `CREATE TRIGGER refuse BEFORE INSERT ON $schema.messages FOR EACH ROW EXECUTE FUNCTION $schema.refuse()`);
      await put(store, "q", [grouped("m1", "k", 1_000), grouped("m2", "k", 1_000)]);
      const { groups } = await store.claimGroups("q", debounce(100), 10);
      const error = (await rejection(store.completeGroup("q", ids(groups[0]), { queue: "out", message: message("boom") }))) as Error;
      expect(String((error.cause as Error | undefined)?.message ?? error.message)).to.match(/refused/);
      expect(await store.depth("out")).to.equal(0);
      await until(async () => (await store.stats("q")).inFlight === 0, 3_000);
      expect((await store.claimGroups("q", debounce(100), 10)).groups.map(ids)).to.deep.equal([["m1", "m2"]]);
    });

    it("refuses an output it cannot encode with a plain error, keeping the group claimed", async () => {
      const store = await open();
      await put(store, "q", [grouped("m1", "k", 1_000)]);
      const { groups } = await store.claimGroups("q", debounce(100), 10);
      const error = (await rejection(store.completeGroup("q", ids(groups[0]), { queue: "out", message: message("bad\u0000id") }))) as Error;
      expect(error.message).to.match(/U\+0000/);
      expect(await store.stats("q")).to.include({ inFlight: 1 });
      await store.completeGroup("q", ids(groups[0]));
      expect(await store.depth("q")).to.equal(0);
    });
  });

  it("keeps the group key through a retry, a dead letter and its replay", async () => {
    const store = await open();
    await put(store, "q", [grouped("m1", "k", 1_000), grouped("m2", "k", 1_000)]);
    const [group] = (await store.claimGroups("q", debounce(100), 10)).groups;
    await store.retryLater("q", { ...group[0], attempts: 1, lastError: "boom" }, Date.now() - 1);
    await store.deadLetter({ queue: "q", message: { ...group[1], attempts: 1 }, task: "t", error: "dead", attempts: 1, diedAt: Date.now() });
    expect((await store.deadLetters.get("m2"))!.message.groupKey).to.equal("k");
    const retried = (await store.claimGroups("q", debounce(100), 10)).groups;
    expect(retried.map(ids)).to.deep.equal([["m1"]]);
    expect(retried[0][0]).to.include({ groupKey: "k", attempts: 1, lastError: "boom" });
    await store.completeGroup("q", ["m1"]);
    expect(await store.deadLetters.replay("m2")).to.equal(true);
    // A replay is a new arrival with its old enqueuedAt: due at once.
    const replayed = (await store.claimGroups("q", debounce(100), 10)).groups;
    expect(replayed.map(ids)).to.deep.equal([["m2"]]);
    expect(replayed[0][0]).to.include({ groupKey: "k", attempts: 0 });
  });

  it("a retry waiting for its time is not part of a group until then", async () => {
    const store = await open();
    await put(store, "q", [grouped("m1", "k", 1_000)]);
    const [group] = (await store.claimGroups("q", debounce(100), 10)).groups;
    await store.retryLater("q", { ...group[0], attempts: 1 }, Date.now() + 400);
    expect((await store.claimGroups("q", debounce(100), 10)).groups).to.deep.equal([]);
    expect(await store.stats("q")).to.include({ waiting: 1, delayed: 1, inFlight: 0 });
    await new Promise((r) => setTimeout(r, 450));
    expect((await store.claimGroups("q", debounce(100), 10)).groups.map(ids)).to.deep.equal([["m1"]]);
  });

  it("keeps a group key the way it keeps ordering keys: any text, U+0000 included", async () => {
    const store = await open();
    await put(store, "q", [grouped("m1", "a\u0000b", 1_000), grouped("m2", "", 1_000)]);
    const { groups } = await store.claimGroups("q", debounce(100), 10);
    expect(groups.map((g) => g[0].groupKey)).to.deep.equal(["a\u0000b", ""]);
  });

  it("refuses a rule it cannot apply, saying which field", async () => {
    const store = await open();
    const bad: Array<[unknown, RegExp]> = [
      [{ kind: "throttle", maxSize: 1 }, /kind must be "debounce" or "batch"/],
      [{ kind: "batch", maxSize: 0, maxWaitMs: 10 }, /maxSize must be a whole number/],
      [{ kind: "batch", maxSize: 2.5, maxWaitMs: 10 }, /maxSize must be a whole number/],
      [{ kind: "batch", maxSize: 3_000_000_000, maxWaitMs: 10 }, /maxSize must be a whole number from 1 to 2147483647/],
      [{ kind: "batch", maxSize: 2 }, /maxWaitMs must be a finite number/],
      [{ kind: "batch", maxSize: 2, maxWaitMs: -1 }, /maxWaitMs must be a finite number/],
      [{ kind: "debounce", maxSize: 2, periodMs: Number.NaN }, /periodMs must be a finite number/],
      [{ kind: "debounce", maxSize: 2, periodMs: 10, maxWaitMs: Infinity }, /maxWaitMs must be a finite number/],
    ];
    for (const [rule, pattern] of bad) {
      const error = (await rejection(store.claimGroups("q", rule as GroupRule, 1))) as Error;
      expect(error, JSON.stringify(rule)).to.be.instanceOf(TypeError);
      expect(error.message).to.match(pattern);
    }
  });

  it("refuses to decide groups in a session that is not READ COMMITTED", async () => {
    const schema = fixture.schema();
    await (await open({ schema })).enqueue("q", grouped("m1", "k", 1_000));
    const serializable = await open({ schema, connectionString: `${fixture.url}?options=-c%20default_transaction_isolation%3Dserializable` });
    const error = (await rejection(serializable.claimGroups("q", debounce(100), 1))) as Error;
    expect(error.message).to.match(/need READ COMMITTED/);
  });

  it("counts collecting and claimed group messages in depth, stats and queue names", async () => {
    const store = await open();
    await put(store, "q", [grouped("m1", "k", 1_000), grouped("m2", "j", 0)]);
    await store.claimGroups("q", debounce(500), 10);
    expect(await store.depth("q")).to.equal(2);
    expect(await store.stats("q")).to.include({ waiting: 1, inFlight: 1 });
    expect(await store.queueNames()).to.deep.equal(["q"]);
  });
});
