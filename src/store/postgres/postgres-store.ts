import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import pg from "pg";
import { emitList, type ClaimedGroups, type ClaimFlow, type DeadLetter, type EmitRecord, type GroupRule, type QueuedMessage, type QueueStats, type StateStore, type Store, type StoreCloseOptions, type StoreRefusal } from "../store";
import type { NewRow } from "./batched-writes";
import { StoreRefusedError } from "../store-errors";
import { ClaimSql } from "./claim-sql";
import { FlowClaimSql } from "./flow-claim-sql";
import { DepthCache } from "./depth-cache";
import { BatchedWrites } from "./batched-writes";
import { DatabaseProbe } from "./database-probe";
import { HeldMessages, type Held } from "./held-messages";
import { deadLetterValues, decodeMessage, encodeMessage, type EncodedMessage } from "./message-rows";
import { MessageSql } from "./message-sql";
import { migrate } from "./migrations";
import { NotificationListener } from "./notification-listener";
import { PostgresDeadLetters } from "./postgres-dead-letters";
import { isConfigurationError, isDiskFull, isUnavailable, serverCode } from "./postgres-errors";
import { PostgresGroups } from "./postgres-groups";
import { PostgresHealth, unavailableError } from "./postgres-health";
import { resolvePostgresOptions, type PostgresPool, type PostgresQueryResult, type PostgresStoreOptions, type ResolvedPostgresOptions } from "./postgres-options";
import { PostgresState, sweepExpiredState } from "./postgres-state";
import { statementName } from "./prepared-statements";
import { ThrottledLog } from "./throttled-log";
import { storableText } from "./storable-text";
import { retryTransient } from "./transient-retry";
import { QueueWatchers } from "../queue-watchers";
import { PostgresHistory } from "./history/postgres-history";
import { PAUSES_NOTICE, PostgresPauses } from "./history/postgres-pauses";
import { PoolConnections } from "./pool-connections";
import { settledWithin } from "../../util/settled-within";

const ignore = (): void => undefined;

/** After its connections are cut, how long a close waits for what ran on them to fail and unwind. */
const CUT_UNWIND_MS = 250;

/**
 * A limit, count or period as the limited claim's integer parameters take it. A task accepts
 * larger limits (2^31 runs at once, meaning no limit), which would fail every claim of the task;
 * no claim can tell a larger one from this one.
 */
const pgInteger = (n: number): number => Math.min(2_147_483_647, Math.floor(n));
const pgIntegerOrNull = (n: number | undefined): number | null => (n === undefined ? null : pgInteger(n));

/** Most messages one limited claim hands out: its candidates (four per message asked) stay an integer too. */
const MAX_LIMITED_CLAIM = 100_000;

/**
 * The store in a PostgreSQL database, shared by any number of processes (replicas of one app,
 * and the CLI): queues, dead letters and state in tables of their own schema.
 *
 * New messages are group-committed: the enqueues of one event-loop turn (and those arriving
 * while a batch is being written) become one multi-row INSERT, one commit; an enqueue resolves
 * after that COMMIT. Completions are batched the same way, each deleting its input and adding
 * its output in the same statement. A claim is a lease: the claiming process renews it while
 * the task runs; a process that dies leaves leases that expire, and any other process then
 * hands those messages out again with the attempt counted. Processes wake each other with
 * LISTEN/NOTIFY; the runners' polling covers any notification lost.
 *
 * `admit` answers from memory: queue depths counted now and then (plus this process's own
 * changes) and the database's health as last seen, so that a database that is down is
 * answered 503 at once.
 */
export class PostgresStore implements Store {
  readonly engine = "postgres";
  readonly durable = true;
  readonly claimsAreStatements = true;
  readonly deadLetters: PostgresDeadLetters;
  /** The event history, in tables every replica shares; notes are written in the background. */
  readonly history: PostgresHistory;
  /** Paused tasks, told to every replica through the schema's notifications. */
  readonly pauses: PostgresPauses;

  private readonly options: ResolvedPostgresOptions;
  private pool: PostgresPool;
  private readonly ownsPool: boolean;
  /** The connections of the store's own pool (none known of a pool you gave). */
  private connections: PoolConnections | undefined;
  /** What the close waits for now, for the line that says what a late close abandoned. */
  private closingStep = "";
  /** Names this process in `claimed_by` and in its notifications. */
  private readonly token = `${hostname()}/${process.pid}/${randomBytes(4).toString("hex")}`;
  private readonly channel: string;
  private readonly messages: MessageSql;
  private readonly claims: ClaimSql;
  private readonly flowClaims: FlowClaimSql;
  /** Debounced and batched tasks' groups (postgres-groups.ts). */
  private readonly groups: PostgresGroups;
  /** Claims enforce flow limits in SQL, across replicas (flow-claim-sql.ts). */
  readonly enforcesFlow = true;
  private readonly log: ThrottledLog;
  private readonly health: PostgresHealth;
  private readonly depths = new DepthCache();
  private readonly held = new HeldMessages();
  /** Queues last seen holding messages with an ordering key: claimed with the ordering-key checks. */
  private readonly keyedQueues = new Set<string>();
  private readonly watchers = new QueueWatchers();
  private readonly writes: BatchedWrites;
  private readonly probe: DatabaseProbe;
  private readonly queryTimeoutMs: number;
  private listener: NotificationListener | undefined;
  private timers: NodeJS.Timeout[] = [];
  private migrated = false;
  private wanted = false;
  private closed = false;
  private readonly onPoolError = (error: Error): void => {
    // An idle connection broke (the server restarted): the pool drops it; say so, never crash.
    this.log.failed("connection", error, "a pooled PostgreSQL connection failed");
  };

  constructor(options: PostgresStoreOptions) {
    this.options = resolvePostgresOptions(options);
    const { schema, logger } = this.options;
    this.channel = schema;
    this.messages = new MessageSql(schema);
    this.claims = new ClaimSql(schema);
    this.flowClaims = new FlowClaimSql(schema);
    this.log = new ThrottledLog(logger);
    this.health = new PostgresHealth(this.log, () => this.probe.start());
    this.probe = new DatabaseProbe(
      this.options.probeIntervalMs,
      () => this.tryDatabase(),
      () => this.databaseBack(),
      (error) => this.health.failed(error),
      // Failed statements come wrapped in a refusal: the server's error is its cause.
      (error) => isConfigurationError(error instanceof StoreRefusedError ? error.cause : error),
    );
    // The server's statement_timeout ends a slow statement; this ends the wait for a server that answers nothing.
    this.queryTimeoutMs = this.options.statementTimeoutMs + 1_000;
    this.ownsPool = this.options.pool === undefined;
    this.pool = this.options.pool ?? this.newPool();
    this.writes = new BatchedWrites({ sql: this.messages, query: (text, values, name) => this.query(text, values, name), channel: this.channel, token: this.token });
    this.deadLetters = new PostgresDeadLetters({
      run: (text, values) => this.run(text, values),
      schema,
      channel: this.channel,
      token: this.token,
      replayed: (queue) => {
        this.depths.adjust(queue, 1);
        this.notify(queue);
      },
    });
    this.history = new PostgresHistory(
      {
        schema,
        run: (text, values) => this.run(text, values),
        write: (text, values) => this.writeHistory(text, values),
        connect: () => {
          this.require();
          return this.pool.connect();
        },
        queryTimeoutMs: this.options.statementTimeoutMs + 1_000,
        log: this.log,
        logger,
        blocked: () => this.health.failure !== undefined,
      },
      this.options.historyWriter,
    );
    this.pauses = new PostgresPauses({ schema, run: (text, values) => this.run(text, values), channel: this.channel, token: this.token });
    this.groups = new PostgresGroups({
      schema,
      token: this.token,
      channel: this.channel,
      leaseMs: this.options.leaseMs,
      held: this.held,
      query: (text, values, name) => {
        this.require();
        return this.query(text, values, name);
      },
      adjustDepth: (queue, delta) => this.depths.adjust(queue, delta),
      notify: (queue) => this.notify(queue),
      abandon: (held) => this.abandon(held),
    });
  }

  /** The store's own pool (a new one at each open: `close` ends it). */
  private newPool(): PostgresPool {
    this.connections = new PoolConnections();
    return new pg.Pool({
      Client: this.connections.Client,
      connectionString: this.options.connectionString,
      max: this.options.poolSize,
      connectionTimeoutMillis: this.options.connectionTimeoutMs,
      statement_timeout: this.options.statementTimeoutMs,
      keepAlive: true,
      application_name: "webhook-tasks",
    });
  }

  /** Statements written by group commit so far (each one a commit): enqueue batches and completion batches. */
  get batches(): { readonly enqueues: number; readonly completions: number } {
    return this.writes.batches;
  }

  /** Why the store refuses work (the database cannot be reached), or undefined while it works. */
  get failure(): Error | undefined {
    return this.health.failure;
  }

  /**
   * Creates or migrates the schema and starts the timers. A database that cannot be reached
   * does not make it throw: the store refuses work (503) and tries again every second. A
   * database that refuses us (bad password, no such database, no permission) does.
   */
  async open(): Promise<void> {
    if (this.wanted) return;
    if (this.closed && this.ownsPool) this.pool = this.newPool();
    this.closed = false;
    this.wanted = true;
    this.pool.on("error", this.onPoolError);
    try {
      await this.migrateNow();
      this.health.recovered();
    } catch (error) {
      if (!isUnavailable(error) || isConfigurationError(error)) {
        await this.close();
        throw new Error(`PostgresStore: cannot open schema "${this.options.schema}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      this.health.failed(error);
      this.probe.start();
    }
    const { consumer, leaseMs, depthRefreshMs, sweepIntervalMs } = this.options;
    this.every(depthRefreshMs, () => this.refreshDepths());
    this.every(sweepIntervalMs, () => sweepExpiredState((text, values) => this.run(text, values), this.options.schema));
    if (!consumer) return;
    this.every(Math.max(50, Math.floor(leaseMs / 3)), () => this.renewLeases());
    this.every(Math.min(5_000, Math.max(50, Math.floor(leaseMs / 2))), () => this.reap());
    this.listener = new NotificationListener({
      pool: this.pool,
      channel: this.channel,
      token: this.token,
      log: this.log,
      statementTimeoutMs: this.queryTimeoutMs,
      heartbeatMs: Math.max(1_000, depthRefreshMs),
      onQueue: (queue) => this.notify(queue),
      onPauses: () => this.pauses.changed(),
      pausesNotice: PAUSES_NOTICE,
      onRelistening: () => {
        this.notifyAll();
        this.pauses.changed();
      },
    });
    this.listener.start();
  }

  /**
   * Stops the timers, lets batches in flight finish, and gives back what this process still
   * holds (as a lease expiry would, the attempt counted: those tasks were cut short). With
   * `timeoutMs`, a database that has not answered by then (frozen, a network dropping packets)
   * has the store's connections cut: their statements fail at once, what they were writing is
   * abandoned (said in the log), and the close resolves.
   */
  async close(options: StoreCloseOptions = {}): Promise<void> {
    if (!this.wanted) return;
    this.wanted = false;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.probe.stop();
    const held = this.held.size;
    const steps = this.closeSteps();
    if (options.timeoutMs === undefined || (await settledWithin(steps, options.timeoutMs))) return steps;
    const waitingFor = this.closingStep;
    const cut = this.connections?.cut() ?? 0;
    this.options.logger?.warn(
      { store: "postgres", waitingFor, connectionsCut: cut, heldMessages: held, timeoutMs: options.timeoutMs },
      this.ownsPool
        ? "PostgreSQL did not answer as the store closed: its connections are cut, and what they were writing is abandoned (messages this process held go back to their queues when their leases expire)"
        : "PostgreSQL did not answer as the store closed: the close stops waiting (the pool is yours: its statements go on until their own timeouts)",
    );
    // What ran on them fails now: its lines (history notes dropped, say) come before the app's "stopped".
    await settledWithin(steps, CUT_UNWIND_MS);
  }

  private async closeSteps(): Promise<void> {
    const step = (name: string): void => void (this.closingStep = name);
    // History notes still queued get one try (they never hold the close up for long).
    step("the history's last notes");
    await this.history.close();
    step("the queues' writes in flight");
    await this.writes.idle();
    if (this.held.size > 0 && this.migrated && this.health.failure === undefined) {
      step("giving back the messages this process held");
      await this.query(this.claims.surrender(), [this.channel, this.token, this.held.seqs()]).catch(ignore);
    }
    this.held.clear();
    step("the listening connection's end");
    await this.listener?.stop();
    this.listener = undefined;
    this.migrated = false;
    step("the connections' end");
    if (this.ownsPool) await this.pool.end().catch(ignore);
    else this.pool.removeListener("error", this.onPoolError);
  }

  admit(queue: string): StoreRefusal | undefined {
    const failing = this.health.refusal;
    if (failing) return failing;
    if (!this.wanted || !this.migrated) return notOpen();
    const { maxQueued } = this.options;
    if (this.depths.count(queue) >= maxQueued) {
      return { code: "queue_full", message: `queue "${queue}" holds ${maxQueued} messages`, retryAfterSeconds: 1 };
    }
    return undefined;
  }

  async enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    if (!options?.internal) {
      const refusal = this.admit(queue);
      if (refusal) throw this.health.error() ?? new StoreRefusedError(refusal);
    }
    this.require();
    let row: EncodedMessage;
    try {
      row = encodeMessage(queue, message);
    } catch (error) {
      throw unavailableError(error);
    }
    await this.insert([{ queue, row }]);
  }

  /** One event's copies: rows of the same group-committed INSERT, so committed together or not at all. */
  async enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    if (!options?.internal) {
      for (const { queue } of copies) {
        const refusal = this.admit(queue);
        if (refusal) throw this.health.error() ?? new StoreRefusedError(refusal);
      }
    }
    this.require();
    let rows: NewRow[];
    try {
      rows = copies.map(({ queue, message }) => ({ queue, row: encodeMessage(queue, message) }));
    } catch (error) {
      throw unavailableError(error);
    }
    await this.insert(rows);
  }

  async claim(queue: string, limit: number, flow?: ClaimFlow): Promise<QueuedMessage[]> {
    if (!(limit > 0)) return [];
    this.require();
    let rows: Array<Record<string, unknown>>;
    if (flow !== undefined) rows = (await this.claimLimited(queue, limit, flow)).rows;
    else {
      const n = Math.floor(limit);
      const keyed = this.keyedQueues.has(queue);
      rows = await this.claimRows(queue, n, keyed);
      // Messages with an ordering key wait, which the keyless claim left: claim them now, not at the next poll.
      if (!keyed && this.keyedQueues.has(queue) && rows.length < n) rows = rows.concat(await this.claimRows(queue, n - rows.length, true));
    }
    // Due retries first, by due time; then waiting messages in arrival order.
    rows.sort((a, b) => {
      const va = Number(a.visible_at);
      const vb = Number(b.visible_at);
      if ((va === 0) !== (vb === 0)) return va === 0 ? 1 : -1;
      return va - vb || Number(a.seq) - Number(b.seq);
    });
    return rows.map((row) => {
      // A limited claim's slot frees when it is done: wake this process's claimers then too.
      this.held.hold({ seq: Number(row.seq), queue, id: row.id as string, keyed: row.ordering_key !== null || flow !== undefined });
      return decodeMessage(row);
    });
  }

  /**
   * One claim statement; with `keyed` false it takes messages without an ordering key only
   * (see ClaimSql.claim). Notes whether the queue holds messages with a key, for the next claim.
   */
  private async claimRows(queue: string, n: number, keyed: boolean): Promise<Array<Record<string, unknown>>> {
    // Not prepared: a generic plan of this statement was measured up to 3x slower than a plan per call.
    const { rows } = await this.query(this.claims.claim(), [queue, n, Date.now(), this.token, this.options.leaseMs, keyed]);
    if (rows[0]?.keyed_waiting === true) this.keyedQueues.add(queue);
    else this.keyedQueues.delete(queue);
    // With nothing claimed, the one row carries keyed_waiting alone.
    return rows.filter((row) => row.seq !== null);
  }

  /** Claims under flow limits (flow-claim-sql.ts); the rate limit's wait, if any, goes to `flow.rateWait`. */
  private async claimLimited(queue: string, limit: number, flow: ClaimFlow): Promise<{ rows: Array<Record<string, unknown>> }> {
    // A start is counted at its claim, by the database's clock; its handler starts a moment later,
    // after the reply's trip. The window is kept a little longer (10%, at most 100 ms) so that the
    // handlers' own start times stay within the limit when one claim's reply is slower than the next's.
    const period = flow.rate === undefined ? null : pgInteger(flow.rate.periodMs + Math.min(100, Math.ceil(flow.rate.periodMs / 10)));
    const values = [queue, Math.min(MAX_LIMITED_CLAIM, Math.floor(limit)), Date.now(), this.token, this.options.leaseMs, pgIntegerOrNull(flow.concurrency), pgIntegerOrNull(flow.rate?.limit), period];
    const { rows } = await this.query(this.flowClaims.claim(), values);
    const messages = rows.filter((row) => row.seq !== null);
    const wait = rows.find((row) => row.seq === null);
    if (wait !== undefined && flow.rateWait !== undefined) flow.rateWait(Date.now() + Number(wait.rate_wait_ms));
    return { rows: messages };
  }

  /** Waiting messages held back by a full concurrency or rate group. */
  async limitedCount(queue: string, flow: ClaimFlow): Promise<number> {
    this.require();
    const { rows } = await this.run(this.flowClaims.limited(), [queue, Date.now(), pgIntegerOrNull(flow.concurrency), pgIntegerOrNull(flow.rate?.limit), pgIntegerOrNull(flow.rate?.periodMs)]);
    return Number(rows[0].n);
  }

  /** Due groups, decided under the queue's lock so that one group goes to one replica (group-claim-sql.ts). */
  claimGroups(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> {
    return this.groups.claim(queue, rule, limit);
  }

  /** A group's messages leave and its output arrives in one transaction, or nothing happens. */
  completeGroup(queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    return this.groups.complete(queue, ids, emit);
  }

  async complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    const held = this.held.find(queue, id);
    const emits = emitList(emit);
    if (!held && emits.length === 0) return;
    this.require();
    // A result that cannot be encoded is the task's failure, not the store's: a plain error.
    const out: NewRow[] = emits.map((e) => ({ queue: e.queue, row: encodeMessage(e.queue, e.message) }));
    for (const o of out) this.depths.adjust(o.queue, 1);
    let done: boolean;
    try {
      done = await this.writes.complete({ held, emits: out });
    } catch (error) {
      for (const o of out) this.depths.adjust(o.queue, -1);
      if (held) this.abandon(held);
      // The store's failure, not the task's: the message is given back and runs again, never
      // turned into a task failure (whose retry would insert the message a second time).
      throw unavailableError(error);
    }
    if (held) {
      this.held.drop(held);
      if (done) this.depths.adjust(queue, -1);
      if (done && held.keyed) this.notify(queue);
    }
    for (const o of out) {
      // Its input had been claimed again elsewhere (this lease had expired): that run will emit.
      if (!done) this.depths.adjust(o.queue, -1);
      else this.notify(o.queue);
    }
  }

  async retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    this.require();
    const held = this.held.find(queue, message.id);
    const due = visibleAt <= Date.now();
    // 0 means "never delayed" in the table: a retry's time is at least 1 ms.
    const at = Math.max(1, Math.floor(visibleAt));
    if (!held) {
      await this.insert([{ queue, row: encodeMessage(queue, message, at) }]);
      return;
    }
    try {
      const retry = this.messages.retry();
      // Not named: it looks its row up in messages (see prepared-statements).
      await this.query(retry, [held.seq, at, message.attempts, storableText(message.lastError) ?? null, this.token, this.channel, due]);
    } catch (error) {
      this.abandon(held, message.attempts);
      throw error;
    }
    this.held.drop(held);
    if (due) this.notify(queue);
  }

  async release(queue: string, ids: readonly string[]): Promise<void> {
    const seqs: number[] = [];
    for (const id of ids) {
      const held = this.held.find(queue, id);
      if (!held) continue;
      this.held.drop(held);
      seqs.push(held.seq);
    }
    if (seqs.length === 0) return;
    this.require();
    await this.query(this.messages.release(), [seqs, this.token, this.channel, queue]);
    this.notify(queue);
  }

  async deadLetter(letter: DeadLetter): Promise<void> {
    this.require();
    const held = this.held.find(letter.queue, letter.message.id);
    const values = deadLetterValues(letter);
    if (!held) {
      await this.query(this.messages.deadLetterOnly(), values);
      return;
    }
    let kept: boolean;
    try {
      const { rows } = await this.query(this.messages.deadLetterHeld(), [held.seq, this.token, this.channel, held.keyed, ...values]);
      kept = Number(rows[0]?.kept ?? 0) > 0;
    } catch (error) {
      this.abandon(held, letter.message.attempts);
      throw error;
    }
    this.held.drop(held);
    if (kept) this.depths.adjust(letter.queue, -1);
    // Its ordering key is free now: the next message with that key may go.
    if (kept && held.keyed) this.notify(letter.queue);
  }

  state(namespace: string): StateStore {
    return new PostgresState((text, values) => this.run(text, values), this.options.schema, namespace);
  }

  async depth(queue: string): Promise<number> {
    const { rows } = await this.run(this.messages.depth(), [queue]);
    return Number(rows[0].n);
  }

  async stats(queue: string): Promise<QueueStats> {
    const { rows } = await this.run(this.messages.stats(), [queue, Date.now()]);
    const row = rows[0];
    return {
      waiting: Number(row.waiting),
      inFlight: Number(row.in_flight),
      oldestEnqueuedAt: row.oldest === null ? undefined : Number(row.oldest),
      deadLetters: Number(row.dead),
      delayed: Number(row.delayed),
    };
  }

  async queueNames(): Promise<string[]> {
    const { rows } = await this.run(this.messages.queueNames(), []);
    return rows.map((row) => String(row.queue));
  }

  watch(queue: string, listener: () => void): () => void {
    return this.watchers.watch(queue, listener);
  }

  /** Removes expired state entries now (also done every `sweepIntervalMs`); returns how many. */
  async sweepExpired(): Promise<number> {
    return sweepExpiredState((text, values) => this.run(text, values), this.options.schema);
  }

  /** Takes back expired leases now (also done on a timer by consumers); returns how many queues had some. */
  async reap(): Promise<number> {
    if (!this.migrated || this.health.failure) return 0;
    const { rows } = await this.query(this.claims.reap(), [this.channel, this.token]);
    const queues = rows[0].queues as string[];
    // An operator otherwise sees a run start again with no sign of why: its process died or stalled.
    if (queues.length > 0) this.options.logger?.warn({ messages: rows[0].taken as number, queues }, "took back messages whose lease expired (the process running them stopped renewing it: a crash or a stall); they run again, their attempt counted");
    for (const queue of queues) this.notify(queue);
    return queues.length;
  }

  private async insert(rows: readonly NewRow[]): Promise<void> {
    // Counted before the commit so that admit sees requests still in flight.
    for (const r of rows) this.depths.adjust(r.queue, 1);
    try {
      await this.writes.insert(rows);
    } catch (error) {
      for (const r of rows) this.depths.adjust(r.queue, -1);
      throw unavailableError(error);
    }
    for (const r of rows) this.notify(r.queue);
  }

  /**
   * A write about a held message failed: stop renewing it and give it back if the database lets
   * us (else its lease expires). A failed run's `attempts` still count: an outcome that never
   * writes must not let the message run for ever.
   */
  private abandon(held: Held, attempts?: number): void {
    this.held.drop(held);
    const { text, values } =
      attempts === undefined
        ? { text: this.messages.release(), values: [[held.seq], this.token, this.channel, held.queue] }
        : { text: this.messages.releaseCounted(), values: [held.seq, this.token, this.channel, held.queue, attempts] };
    void this.pool.query({ text, values, query_timeout: this.queryTimeoutMs }).then(() => this.notify(held.queue), ignore);
  }

  private async renewLeases(): Promise<void> {
    if (this.held.size === 0 || !this.migrated) return;
    await this.query(this.claims.renew(), [this.held.seqs(), this.token, this.options.leaseMs]);
  }

  private async refreshDepths(): Promise<void> {
    if (!this.migrated || this.health.failure) return;
    await this.countDepths();
  }

  private async countDepths(): Promise<void> {
    await this.depths.refresh(async () => {
      const { rows } = await this.query(this.messages.depths(), []);
      return new Map(rows.map((row) => [row.queue as string, Number(row.n)]));
    });
  }

  private async migrateNow(): Promise<void> {
    await migrate(this.pool, this.options.schema, this.options.logger);
    this.migrated = true;
    await this.countDepths();
  }

  /** One try of the probe: the schema if it was never opened, else a fresh count (a round trip). */
  private async tryDatabase(): Promise<void> {
    if (!this.migrated) return this.migrateNow();
    await this.countDepths();
    // A full disk fails writes, not reads: a count alone would clear the failure every second
    // while every write still fails (and a task whose outcome cannot be written ran again each time).
    if (isDiskFull(this.health.failure)) await this.tryNewPage();
  }

  /**
   * Writes one new page and leaves nothing: a temporary table's first row, rolled back. Fails
   * while the disk has no room for it; any other refusal (no right to make temporary tables)
   * cannot tell, and lets the store try its work.
   */
  private async tryNewPage(): Promise<void> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      // One simple-protocol string: a failure leaves its transaction open, and the connection is dropped below.
      await client.query({ text: "BEGIN; CREATE TEMPORARY TABLE webhook_tasks_room (n int) ON COMMIT DROP; INSERT INTO webhook_tasks_room VALUES (1); ROLLBACK", query_timeout: this.queryTimeoutMs });
    } catch (error) {
      broken = error instanceof Error ? error : new Error(String(error));
      if (isDiskFull(error) || isUnavailable(error)) throw error;
    } finally {
      client.release(broken);
    }
  }

  private databaseBack(): void {
    if (!this.wanted) return;
    this.health.recovered();
    this.listener?.retryNow();
    // Work may be waiting (runners paused meanwhile): wake whoever listens.
    this.notifyAll();
  }

  private every(ms: number, task: () => Promise<unknown>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running || !this.wanted) return;
      running = true;
      task()
        .catch(ignore)
        .finally(() => (running = false));
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Runs a statement for the state and the dead letters: refused while the store is not open. */
  private async run(text: string, values: unknown[]): Promise<PostgresQueryResult> {
    this.require();
    try {
      return await this.query(text, values);
    } catch (error) {
      // A read or write cancelled by the statement timeout (a database too busy for it): a
      // refusal to try again later (a console's 503), not a failure of the request itself.
      // The store stays healthy: the next statement may well pass.
      if (serverCode(error) === "57014") throw new StoreRefusedError(STATEMENT_TIMED_OUT, { cause: error });
      throw error;
    }
  }

  /** Runs one statement; a failure for want of the database marks the store failing and becomes a refusal. */
  private async query(text: string, values: unknown[], name?: string): Promise<PostgresQueryResult> {
    try {
      const prepared = this.options.preparedStatements ? name : undefined;
      // Each statement here is its own transaction: one that lost to a concurrent one left nothing, and is sent again.
      return await retryTransient(() => this.pool.query({ text, values, name: prepared, query_timeout: this.queryTimeoutMs }));
    } catch (error) {
      if (!isUnavailable(error)) throw error;
      if (this.wanted) this.health.failed(error);
      throw unavailableError(error);
    }
  }

  /**
   * The history writer's statement: on the pool, prepared, retried when it lost to a concurrent
   * transaction, and never marking the store failing (the history must not stop the queues).
   */
  private async writeHistory(text: string, values: unknown[]): Promise<PostgresQueryResult> {
    if (!this.wanted || !this.migrated) throw new Error("the store is not open");
    const name = this.options.preparedStatements ? statementName(text) : undefined;
    return retryTransient(() => this.pool.query({ text, values, name, query_timeout: this.queryTimeoutMs }));
  }

  private require(): void {
    if (this.wanted && this.migrated) return;
    throw this.health.error() ?? new StoreRefusedError(notOpen());
  }

  private notifyAll(): void {
    this.watchers.notifyAll();
  }

  private notify(queue: string): void {
    this.watchers.notify(queue);
  }
}

const STATEMENT_TIMED_OUT: StoreRefusal = {
  code: "store_unavailable",
  message: "the database did not answer in time (statement timeout)",
  retryAfterSeconds: 1,
};

function notOpen(): StoreRefusal {
  return { code: "store_unavailable", message: "the store is not open", retryAfterSeconds: 5 };
}
