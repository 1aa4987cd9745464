import { expect } from "chai";
import pg from "pg";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { LATEST_SCHEMA_VERSION, migrate } from "../../../src/store/postgres/migrations";
import { LEASE_EXPIRED } from "../../../src/store/postgres/claim-sql";
import { historyTables } from "../../../src/store/postgres/history/history-tables";
import { listEventsSql } from "../../../src/store/postgres/history/list-events-sql";
import type { PostgresPool, PostgresStoreOptions } from "../../../src/store/postgres/postgres-options";
import type { QueuedMessage } from "../../../src/store/store";
import { message, rejection } from "../store-conformance";
import { recordingLogger, until, type LogLine } from "../../helpers/wait";
import { PostgresFixture, TEST_POSTGRES_URL } from "./postgres-fixture";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

/** A pg.Pool that counts the statements it runs, by their first words. */
class CountingPool extends pg.Pool {
  readonly statements: string[] = [];
  /** The prepared statement name of each statement in `statements` (undefined: unnamed). */
  readonly names: Array<string | undefined> = [];
  override query(...args: unknown[]): never {
    const first = args[0] as string | { text: string; name?: string };
    this.statements.push((typeof first === "string" ? first : first.text).replace(/\s+/g, " ").trim());
    this.names.push(typeof first === "string" ? undefined : first.name);
    return (super.query as (...a: unknown[]) => never)(...args);
  }
  count(pattern: RegExp): number {
    return this.statements.filter((s) => pattern.test(s)).length;
  }
}

describe("PostgresStore", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  const pools: pg.Pool[] = [];
  afterEach(async () => {
    await fixture.cleanup();
    for (const pool of pools.splice(0)) await pool.end().catch(() => undefined);
  });

  async function open(options: Parameters<PostgresFixture["store"]>[0] = {}): Promise<PostgresStore> {
    const store = fixture.store(options);
    await store.open();
    return store;
  }

  describe("schema and migrations", () => {
    /** The history's indexes as versions 2 to 4 made them (migration 5 replaces them). */
    async function historyIndexesOfVersion4(pool: pg.Pool, schema: string): Promise<void> {
      const events = `"${schema}".history_events`;
      await pool.query(`DROP INDEX "${schema}".history_events_by_first_task, "${schema}".history_events_by_tasks, "${schema}".history_events_by_time, "${schema}".history_events_by_source`);
      await pool.query(`CREATE INDEX history_events_by_task ON ${events} USING gin (tasks)`);
      await pool.query(`CREATE INDEX history_events_by_time ON ${events} (received_at, id)`);
      await pool.query(`CREATE INDEX history_events_by_source ON ${events} (source, received_at, id) WHERE source IS NOT NULL`);
    }

    it("creates its tables in its own schema and records the migration once, however often it opens", async () => {
      const schema = fixture.schema();
      const first = await open({ schema });
      await first.close();
      const second = await open({ schema });
      await second.enqueue("q", message("m1"));
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL });
      pools.push(pool);
      const tables = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema]);
      expect(tables.rows.map((r) => r.table_name)).to.deep.equal(["dead_letters", "history_events", "history_runs", "messages", "migrations", "paused_tasks", "rate_starts", "state"]);
      const versions = await pool.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
      expect(versions.rows.map((r) => r.version)).to.deep.equal(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
      expect(await migrate(pool as unknown as PostgresPool, schema)).to.deep.equal([]);
    });

    it("migrates a schema of the first version (no history) in place: its messages stay, the history and pauses work", async () => {
      const schema = fixture.schema();
      const first = await open({ schema });
      await first.enqueue("q", message("kept"));
      await first.close();
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL });
      pools.push(pool);
      // Back to version 1, as the previous release left it, with its message waiting.
      await pool.query(`DROP TABLE "${schema}".history_events, "${schema}".history_runs, "${schema}".paused_tasks, "${schema}".rate_starts`);
      await pool.query(`DROP FUNCTION "${schema}".claim_limited, "${schema}".claim_groups`);
      await pool.query(`ALTER TABLE "${schema}".messages DROP COLUMN concurrency_key, DROP COLUMN rate_key, DROP COLUMN group_key`);
      await pool.query(`ALTER TABLE "${schema}".dead_letters DROP COLUMN concurrency_key, DROP COLUMN rate_key, DROP COLUMN group_key`);
      await pool.query(`DELETE FROM "${schema}".migrations WHERE version > 1`);
      expect(await migrate(pool as unknown as PostgresPool, schema)).to.deep.equal([2, 3, 4, 5, 6, 7]);
      const store = await open({ schema });
      expect(ids(await store.claim("q", 10))).to.deep.equal(["kept"]);
      store.history.noteEvent({ id: "h1", origin: { kind: "queue", queue: "q" }, receivedAt: Date.now(), deliveries: [], payload: { v: 1 } });
      await store.history.flush();
      expect((await store.history.get("h1"))!.payload).to.deep.equal({ v: 1 });
      await store.pauses.setPaused("t", true);
      expect([...(await store.pauses.paused())]).to.deep.equal(["t"]);
    });

    it("migrates a schema of version 3 (no groups) in place: its messages and dead letters stay, groups work", async () => {
      const schema = fixture.schema();
      const first = await open({ schema });
      await first.enqueue("q", message("kept", { n: 1 }));
      await first.deadLetter({ queue: "g", message: message("dead"), task: "t", error: "e", attempts: 1, diedAt: 1 });
      await first.close();
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL });
      pools.push(pool);
      // Back to version 3, as the previous release left it.
      await pool.query(`DROP FUNCTION "${schema}".claim_groups`);
      await pool.query(`ALTER TABLE "${schema}".messages DROP COLUMN group_key`);
      await pool.query(`ALTER TABLE "${schema}".dead_letters DROP COLUMN group_key`);
      await historyIndexesOfVersion4(pool, schema);
      await pool.query(`DELETE FROM "${schema}".migrations WHERE version > 3`);
      expect(await migrate(pool as unknown as PostgresPool, schema)).to.deep.equal([4, 5, 6, 7]);
      const store = await open({ schema });
      const [kept] = await store.claim("q", 10);
      expect(kept).to.include({ id: "kept" });
      expect(kept.groupKey).to.equal(undefined);
      expect(await store.deadLetters.replay("dead")).to.equal(true);
      await store.enqueue("g", message("grouped", {}, { groupKey: "k", enqueuedAt: Date.now() - 1_000 }));
      // A message from before (no group key) joins the task's group "".
      await store.enqueue("g", message("keyless", {}, { groupKey: "", enqueuedAt: Date.now() - 1_000 }));
      const { groups } = await store.claimGroups("g", { kind: "batch", maxSize: 5, maxWaitMs: 100 }, 10);
      expect(groups.map(ids)).to.deep.equal([["dead", "keyless"], ["grouped"]]);
    });

    it("migrates a history of version 4 (its first indexes) in place: its events keep their order, pages and filters", async () => {
      const schema = fixture.schema();
      const first = await open({ schema });
      const at = Date.now() - 10_000;
      const event = (id: string, tasks: string[], offset: number) =>
        first.history.noteEvent({ id, origin: { kind: "queue", queue: "q" }, receivedAt: at + offset, deliveries: tasks.map((task) => ({ task, queue: "q", messageId: `${id}@${task}` })), payload: { id } });
      event("one", ["a"], 1);
      event("two", ["b", "a"], 2);
      // Two events of one millisecond: ordered by id, a page's cursor between them.
      event("none", [], 2);
      event("other", ["c"], 4);
      await first.history.flush();
      await first.close();
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL });
      pools.push(pool);
      // Back to version 4, as the previous release left it, with its events.
      await historyIndexesOfVersion4(pool, schema);
      await pool.query(`DELETE FROM "${schema}".migrations WHERE version > 4`);
      expect(await migrate(pool as unknown as PostgresPool, schema)).to.deep.equal([5, 6, 7]);
      const indexes = await pool.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE 'history_events_by_%task%' ORDER BY 1`, [schema]);
      expect(indexes.rows.map((r) => r.indexname)).to.deep.equal(["history_events_by_first_task", "history_events_by_tasks"]);
      const store = await open({ schema });
      const listed = async (task: string) => (await store.history.list({ task })).events.map((e) => e.id);
      expect(await listed("a")).to.deep.equal(["two", "one"]);
      expect(await listed("b")).to.deep.equal(["two"]);
      expect(await listed("c")).to.deep.equal(["other"]);
      expect(await listed("d")).to.deep.equal([]);
      const page = await store.history.list({ limit: 2 });
      expect(page.events.map((e) => e.id)).to.deep.equal(["other", "two"]);
      expect((await store.history.list({ limit: 2, cursor: page.next })).events.map((e) => e.id)).to.deep.equal(["none", "one"]);
      const byTime = await pool.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'history_events_by_time'`, [schema]);
      expect(byTime.rows[0].indexdef).to.match(/\(received_at\)$/);
    });

    it("finds an event by any of its tasks through the task indexes, without walking the history", async () => {
      const schema = fixture.schema();
      const store = await open({ schema });
      const at = Date.now() - 10_000;
      store.history.noteEvent({ id: "fan", origin: { kind: "queue", queue: "q" }, receivedAt: at, deliveries: [{ task: "x", queue: "q", messageId: "m1" }, { task: "y", queue: "q", messageId: "m2" }], payload: {} });
      await store.history.flush();
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL });
      pools.push(pool);
      // The plan the store's list would take if the history were large: no walk of the time index.
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        await client.query("SET LOCAL enable_seqscan = off");
        const { text, values } = listEventsSql(historyTables(schema), { task: "y" });
        const plan = (await client.query({ text: `EXPLAIN (COSTS OFF) ${text}`, values })).rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
        await client.query("ROLLBACK");
        expect(plan).to.include("history_events_by_first_task").and.include("history_events_by_tasks");
      } finally {
        client.release();
      }
      expect((await store.history.list({ task: "y" })).events.map((e) => e.id)).to.deep.equal(["fan"]);
    });

    it("lets several stores open a new schema at the same moment: one migrates, the others wait and use it", async () => {
      const schema = fixture.schema();
      const stores = Array.from({ length: 6 }, () => fixture.store({ schema }));
      await Promise.all(stores.map((s) => s.open()));
      for (const store of stores) expect(store.failure).to.equal(undefined);
      await stores[0].enqueue("q", message("m1"));
      expect(ids(await stores[5].claim("q", 10))).to.deep.equal(["m1"]);
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL });
      pools.push(pool);
      const versions = await pool.query(`SELECT count(*)::int AS n FROM "${schema}".migrations`);
      expect(versions.rows[0].n).to.equal(LATEST_SCHEMA_VERSION);
    });

    it("opens again after it was closed, with its own pool made anew", async () => {
      const store = await open();
      await store.enqueue("q", message("m1"));
      await store.close();
      expect(store.admit("q")?.code).to.equal("store_unavailable");
      await store.open();
      expect(store.admit("q")).to.equal(undefined);
      expect((await store.claim("q", 1)).map((m) => m.id)).to.deep.equal(["m1"]);
    });

    it("refuses bad options with a clear error", () => {
      expect(() => new PostgresStore({})).to.throw(TypeError, /either connectionString or pool/);
      expect(() => new PostgresStore({ connectionString: "mysql://x" })).to.throw(TypeError, /postgres:\/\//);
      expect(() => new PostgresStore({ connectionString: TEST_POSTGRES_URL, schema: "Bad-Name" })).to.throw(TypeError, /schema must be/);
      expect(() => new PostgresStore({ connectionString: TEST_POSTGRES_URL, leaseMs: 10 })).to.throw(TypeError, /leaseMs/);
      expect(() => new PostgresStore({ connectionString: TEST_POSTGRES_URL, poolSize: 1.5 })).to.throw(TypeError, /poolSize/);
      const notBoolean = { connectionString: TEST_POSTGRES_URL, preparedStatements: "no" } as unknown as PostgresStoreOptions;
      expect(() => new PostgresStore(notBoolean)).to.throw(TypeError, /preparedStatements must be true or false/);
    });

    it("fails to open, saying why, when the database refuses it (no such database)", async () => {
      const url = TEST_POSTGRES_URL.replace(/\/[^/]*$/, "/no_such_database_here");
      const store = fixture.store({ connectionString: url });
      const error = (await rejection(store.open())) as Error;
      expect(error.message).to.match(/cannot open schema .*no_such_database_here/);
    });
  });

  describe("leases between processes", () => {
    it("hides a claim from the other store until its lease expires; the other then claims it with the attempt counted", async () => {
      const schema = fixture.schema();
      // Not a consumer: it claims but never renews, like a process that died after claiming.
      const dead = await open({ schema, consumer: false, leaseMs: 400 });
      const other = await open({ schema, leaseMs: 400 });
      await dead.enqueue("q", message("m1"));
      expect(ids(await dead.claim("q", 10))).to.deep.equal(["m1"]);
      expect(await other.claim("q", 10)).to.deep.equal([]);
      expect(await other.depth("q")).to.equal(1);
      expect(await other.stats("q")).to.include({ waiting: 0, inFlight: 1 });
      let woken = 0;
      other.watch("q", () => woken++);
      await until(async () => (await other.stats("q")).waiting === 1, 3_000);
      const [again] = await other.claim("q", 10);
      expect(again).to.include({ id: "m1", attempts: 1, lastError: LEASE_EXPIRED });
      expect(woken).to.be.greaterThan(0);
      await other.complete("q", "m1");
      expect(await other.depth("q")).to.equal(0);
      // The first claimer's late completion finds nothing of its own and changes nothing.
      await other.enqueue("q", message("m2"));
      await dead.complete("q", "m1");
      expect(await other.depth("q")).to.equal(1);
    });

    it("says, in one warn line, that it took back messages whose lease expired", async () => {
      const schema = fixture.schema();
      const lines: LogLine[] = [];
      const dead = await open({ schema, consumer: false, leaseMs: 200 });
      const other = await open({ schema, consumer: false, leaseMs: 200, logger: recordingLogger(lines) });
      await dead.enqueue("q", message("m1"));
      await dead.enqueue("q", message("m2"));
      expect(ids(await dead.claim("q", 10))).to.deep.equal(["m1", "m2"]);
      expect(await other.reap()).to.equal(0);
      expect(lines.filter((l) => l.msg.startsWith("took back"))).to.deep.equal([]);
      await sleep(400);
      expect(await other.reap()).to.equal(1);
      const taken = lines.filter((l) => l.msg.startsWith("took back messages whose lease expired"));
      expect(taken).to.have.length(1);
      expect(taken[0].fields).to.deep.include({ messages: 2, queues: ["q"] });
    });

    it("renews the leases of what it holds, so that a long task keeps its message", async () => {
      const schema = fixture.schema();
      const runner = await open({ schema, leaseMs: 300 });
      const other = await open({ schema, leaseMs: 300 });
      await runner.enqueue("q", message("m1"));
      await runner.claim("q", 1);
      await sleep(1_000);
      expect(await other.reap()).to.equal(0);
      expect(await other.claim("q", 10)).to.deep.equal([]);
      await runner.complete("q", "m1", { queue: "next", message: message("o1") });
      expect(await other.depth("q")).to.equal(0);
      expect(ids(await other.claim("next", 10))).to.deep.equal(["o1"]);
    });

    it("does not emit for an input another process claimed since its lease expired (that run will)", async () => {
      const schema = fixture.schema();
      const slow = await open({ schema, consumer: false, leaseMs: 200 });
      const other = await open({ schema, leaseMs: 200 });
      await slow.enqueue("in", message("m1"));
      await slow.claim("in", 1);
      await until(async () => (await other.claim("in", 1)).length === 1, 3_000);
      await slow.complete("in", "m1", { queue: "out", message: message("late") });
      expect(await other.depth("out")).to.equal(0);
      expect(await other.depth("in")).to.equal(1);
      await other.complete("in", "m1", { queue: "out", message: message("o1") });
      expect(ids(await other.claim("out", 10))).to.deep.equal(["o1"]);
    });

    it("gives back what it still holds when it closes, the attempt counted", async () => {
      const schema = fixture.schema();
      const closing = await open({ schema });
      const other = await open({ schema });
      await closing.enqueue("q", message("m1"));
      await closing.claim("q", 1);
      await closing.close();
      const [again] = await other.claim("q", 1);
      expect(again).to.include({ id: "m1", attempts: 1 });
    });

    it("hands out one copy of an id at a time, across processes", async () => {
      const schema = fixture.schema();
      const a = await open({ schema });
      const b = await open({ schema });
      await a.enqueue("q", message("same", 1));
      await a.enqueue("q", message("same", 2));
      await a.enqueue("q", message("other"));
      const first = await a.claim("q", 10);
      expect(first.map((m) => m.payload)).to.deep.equal([1, { n: "other" }]);
      expect(await b.claim("q", 10)).to.deep.equal([]);
      await a.complete("q", "same");
      expect((await b.claim("q", 10)).map((m) => m.payload)).to.deep.equal([2]);
      expect(await a.depth("q")).to.equal(2);
    });
  });

  describe("notifications", () => {
    it("wakes the other store's watchers when work arrives, and not its own twice", async () => {
      const schema = fixture.schema();
      const a = await open({ schema });
      const b = await open({ schema });
      let own = 0;
      a.watch("q", () => own++);
      const woke = new Promise<void>((resolve) => b.watch("q", resolve));
      await sleep(200); // both listening
      await a.enqueue("q", message("m1"));
      const started = Date.now();
      await woke;
      expect(Date.now() - started).to.be.lessThan(1_000);
      await sleep(200);
      expect(own).to.equal(1);
      expect(ids(await b.claim("q", 1))).to.deep.equal(["m1"]);
    });

    it("wakes the other store on a replay from a store that consumes nothing (the CLI)", async () => {
      const schema = fixture.schema();
      const app = await open({ schema });
      const cli = await open({ schema, consumer: false });
      await app.enqueue("q", message("m1"));
      const [m1] = await app.claim("q", 1);
      await app.deadLetter({ queue: "q", task: "t", message: { ...m1, attempts: 1, lastError: "e" }, error: "e", attempts: 1, diedAt: Date.now() });
      const woke = new Promise<void>((resolve) => app.watch("q", resolve));
      expect(await cli.deadLetters.replay("m1")).to.equal(true);
      await woke;
      expect(ids(await app.claim("q", 1))).to.deep.equal(["m1"]);
    });
  });

  describe("group commit", () => {
    it("writes many concurrent enqueues with a few statements, and concurrent completions too", async () => {
      const pool = new CountingPool({ connectionString: TEST_POSTGRES_URL, max: 5 });
      pools.push(pool);
      const store = await open({ pool: pool as unknown as PostgresPool });
      const n = 300;
      await Promise.all(Array.from({ length: n }, (_, i) => store.enqueue("q", message(`m${i}`))));
      const inserts = pool.count(/^WITH inserted AS \( ?INSERT/);
      expect(inserts).to.be.at.least(1).and.at.most(5);
      expect(store.batches.enqueues).to.equal(inserts);
      const claimed = await store.claim("q", n);
      expect(claimed).to.have.length(n);
      await Promise.all(claimed.map((m, i) => store.complete("q", m.id, i % 2 === 0 ? { queue: "out", message: message(`o${i}`) } : undefined)));
      expect(pool.count(/^WITH done AS \(DELETE/)).to.be.at.least(1).and.at.most(5);
      expect(await store.depth("q")).to.equal(0);
      expect(await store.depth("out")).to.equal(n / 2);
    });

    it("writes new messages as a few prepared statements whatever their sizes, plans lookups per call, in call order", async () => {
      const pool = new CountingPool({ connectionString: TEST_POSTGRES_URL, max: 3 });
      pools.push(pool);
      const store = await open({ pool: pool as unknown as PostgresPool });
      const sizes = [1, 2, 3, 4, 5, 7, 8, 9, 17, 33];
      const expected: string[] = [];
      for (const size of sizes) {
        const batch = Array.from({ length: size }, (_, i) => `s${size}-${i}`);
        expected.push(...batch);
        await Promise.all(batch.map((id) => store.enqueue("q", message(id))));
      }
      expect(store.batches.enqueues).to.equal(sizes.length);
      const claimed = await store.claim("q", 1_000);
      expect(ids(claimed)).to.deep.equal(expected);
      // Outputs of a batch of completions keep call order too, and only real rows are written.
      await Promise.all(claimed.slice(0, 11).map((m, i) => store.complete("q", m.id, { queue: "out", message: message(`o${i}`) })));
      expect(ids(await store.claim("out", 100))).to.deep.equal(Array.from({ length: 11 }, (_, i) => `o${i}`));
      expect(await store.depth("q")).to.equal(expected.length - 11);
      const failed = claimed[11];
      await store.retryLater("q", { ...failed, attempts: failed.attempts + 1, lastError: "boom" }, Date.now() + 60_000);
      expect(pool.count(/visible_at = \$2/)).to.equal(1);
      const named = (pattern: RegExp): Array<string | undefined> => pool.statements.flatMap((s, i) => (pattern.test(s) ? [pool.names[i]] : []));
      const insertNames = named(/^WITH inserted AS/);
      expect(insertNames).to.have.length(sizes.length);
      expect(insertNames.every((n) => n !== undefined)).to.equal(true);
      // Batch sizes round up to 4, 8, 16, 32, 64 rows: five statement texts for ten sizes.
      expect(new Set(insertNames).size).to.equal(5);
      // Completions find their inputs in messages: planned per call, never by a generic plan
      // made while the table was nearly empty, which scans all of it (see prepared-statements).
      expect(named(/^WITH done AS/)).to.not.be.empty;
      expect(named(/^WITH done AS/).every((n) => n === undefined)).to.equal(true);
      const lookups = pool.statements.filter((s, i) => pool.names[i] !== undefined && /seq = ANY|WHERE seq = /.test(s));
      expect(lookups).to.deep.equal([]);
    });

    it("sends no statement names with preparedStatements: false (for poolers that cannot keep them)", async () => {
      const pool = new CountingPool({ connectionString: TEST_POSTGRES_URL, max: 3 });
      pools.push(pool);
      const store = await open({ pool: pool as unknown as PostgresPool, preparedStatements: false });
      await Promise.all(["a", "b", "c"].map((id) => store.enqueue("q", message(id))));
      const claimed = await store.claim("q", 10);
      expect(ids(claimed)).to.deep.equal(["a", "b", "c"]);
      await Promise.all(claimed.map((m) => store.complete("q", m.id)));
      expect(await store.depth("q")).to.equal(0);
      expect(pool.count(/^WITH inserted AS/)).to.equal(1);
      expect(pool.names.every((n) => n === undefined)).to.equal(true);
    });

    it("splits a burst larger than a statement takes into several, keeping call order", async () => {
      const store = await open();
      const n = 1_234;
      await Promise.all(Array.from({ length: n }, (_, i) => store.enqueue("q", message(`m${i}`))));
      expect(store.batches.enqueues).to.be.at.least(3);
      expect(ids(await store.claim("q", n))).to.deep.equal(Array.from({ length: n }, (_, i) => `m${i}`));
    });

    it("leaves a pool it was given open when it closes", async () => {
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 3 });
      pools.push(pool);
      // A pg.Pool is a PostgresPool as it is.
      const store = await open({ pool });
      await store.close();
      const { rows } = await pool.query("SELECT 1 AS one");
      expect(rows[0].one).to.equal(1);
    });
  });

  describe("what is stored", () => {
    it("keeps the raw bytes once and leaves a body the raw bytes give out of the payload", async () => {
      const schema = fixture.schema();
      const store = await open({ schema });
      const raw = Buffer.from('{"a":1}');
      const sent = message("m1", { body: { a: 1 }, headers: { h: "v" } }, { raw, bodyFromRaw: true, orderingKey: "k", traceContext: { traceparent: "00-abc-def-01" } });
      await store.enqueue("q", sent);
      const [got] = await store.claim("q", 1);
      expect(got).to.deep.equal({ ...sent, payload: { headers: { h: "v" } } });
      const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL });
      pools.push(pool);
      const { rows } = await pool.query(`SELECT raw, ordering_key, trace_context FROM "${schema}".messages`);
      expect(rows[0]).to.deep.equal({ raw, ordering_key: "k", trace_context: { traceparent: "00-abc-def-01" } });
    });

    it("keeps a dead letter's body whole, and replays it lean", async () => {
      const store = await open();
      const raw = Buffer.from('{"a":1}');
      await store.enqueue("q", message("m1", { body: { a: 1 } }, { raw, bodyFromRaw: true }));
      const [m1] = await store.claim("q", 1);
      const revived = { ...m1, payload: { body: { a: 1 } }, attempts: 2, lastError: "boom" };
      await store.deadLetter({ queue: "q", task: "t", message: revived, error: "boom", attempts: 2, diedAt: 5 });
      expect((await store.deadLetters.get("m1"))?.message).to.deep.equal(revived);
      await store.deadLetters.replay("m1");
      const [again] = await store.claim("q", 1);
      expect(again).to.deep.equal({ id: "m1", payload: {}, raw, bodyFromRaw: true, attempts: 0, enqueuedAt: m1.enqueuedAt });
    });

    it("keeps times as given, fractions of a millisecond included", async () => {
      const store = await open();
      const sent = message("m1", 1, { enqueuedAt: 1_700_000_000_000.25 });
      await store.enqueue("q", sent);
      const [got] = await store.claim("q", 1);
      expect(got).to.deep.equal(sent);
      const letter = { queue: "q", task: "t", message: got, error: "e", attempts: 1, diedAt: 1_700_000_000_123.5 };
      await store.deadLetter(letter);
      expect(await store.deadLetters.get("m1")).to.deep.equal(letter);
      expect(await store.deadLetters.replay("m1")).to.equal(true);
    });

    it("reports queue stats: waiting (retries included), in flight, oldest, dead letters", async () => {
      const store = await open();
      expect(await store.stats("q")).to.deep.equal({ waiting: 0, inFlight: 0, oldestEnqueuedAt: undefined, deadLetters: 0, delayed: 0 });
      await store.enqueue("q", message("a", 1, { enqueuedAt: 3_000 }));
      await store.enqueue("q", message("b", 1, { enqueuedAt: 1_000 }));
      await store.enqueue("q", message("c", 1, { enqueuedAt: 2_000 }));
      const [a, b] = await store.claim("q", 2);
      await store.retryLater("q", { ...b, attempts: 1 }, Date.now() + 60_000);
      expect(await store.stats("q")).to.deep.include({ waiting: 2, inFlight: 1, oldestEnqueuedAt: 1_000, deadLetters: 0 });
      await store.deadLetter({ queue: "q", task: "t", message: a, error: "e", attempts: 1, diedAt: 1 });
      expect(await store.stats("q")).to.deep.include({ waiting: 2, inFlight: 0, oldestEnqueuedAt: 1_000, deadLetters: 1 });
      expect(await store.stats("other")).to.deep.equal({ waiting: 0, inFlight: 0, oldestEnqueuedAt: undefined, deadLetters: 0, delayed: 0 });
    });
  });

  describe("state", () => {
    it("lets exactly one of many callers in two processes win setIfAbsent, and again once the value expired", async () => {
      const schema = fixture.schema();
      const a = (await open({ schema })).state("dedupe");
      const b = (await open({ schema })).state("dedupe");
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).setIfAbsent("delivery-1", i, { ttlMs: 300 })));
      expect(results.filter(Boolean)).to.have.length(1);
      expect(await b.setIfAbsent("delivery-1", "late")).to.equal(false);
      await sleep(350);
      const again = await Promise.all([a.setIfAbsent("delivery-1", "a"), b.setIfAbsent("delivery-1", "b")]);
      expect(again.filter(Boolean)).to.have.length(1);
    });

    it("sweeps expired entries and keeps the others", async () => {
      const store = await open();
      const s = store.state("ns");
      await s.set("short", 1, { ttlMs: 20 });
      await s.set("long", 2, { ttlMs: 60_000 });
      await s.set("forever", 3);
      await sleep(40);
      expect(await store.sweepExpired()).to.equal(1);
      expect(await s.get("long")).to.equal(2);
      expect(await s.get("forever")).to.equal(3);
    });
  });
});
