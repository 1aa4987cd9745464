import type {
  DeadLetter,
  DeadLetterStore,
  EmitRecord,
  QueuedMessage,
  StateStore,
  Store,
  StoreRefusal,
} from "../store";
import { StoreRefusedError, toRefusal } from "../store-errors";
import { DEFAULT_EMBEDDED_LIMITS } from "../store-limits";
import { EmbeddedDeadLetters } from "./embedded-dead-letters";
import { EmbeddedState, sweepExpiredState } from "./embedded-state";
import { dueRange, newWriterTag, readyRange, type DelayedKey, type Location, type ReadyKey } from "./keys";
import { allDatabases, openEnvironment, type EmbeddedDbs } from "./lmdb-env";
import { QueueTracker } from "./queue-tracker";
import { deadLetterRecord, messageRecord } from "./records";
import { recoverQueues } from "./recover-queues";
import { SizeGauge } from "./size-gauge";
import { StoreWriter } from "./store-writer";
import { ConsumerLock } from "./consumer-lock";
import { mkdirSync } from "node:fs";
import { WriteHealth } from "./write-health";

export interface EmbeddedStoreOptions {
  /** Directory of the data files; created when missing. */
  readonly dir: string;
  /** Most messages one queue may hold before `admit` refuses (default 10,000,000). */
  readonly maxQueued?: number;
  /** Most bytes the data may occupy before `admit` refuses with store_full (default: no limit but the disk). */
  readonly maxBytes?: number;
  /** How often expired state entries are removed (default one minute). */
  readonly sweepIntervalMs?: number;
  /** How often a store that cannot write (or open) tries again (default one second). */
  readonly probeIntervalMs?: number;
  /**
   * Whether this process consumes the queues (default true): it then takes the directory's
   * consumer lock, and a second consumer is refused. Tools that only manage dead letters pass false.
   */
  readonly consumer?: boolean;
}

const ignore = (): void => undefined;

/** Messages kept in memory between their commit and their claim (beyond it, claims read disk). */
const HANDOFF_LIMIT = 10_000;

/**
 * The durable store: lmdb (a memory-mapped B-tree with copy-on-write transactions) in one
 * directory. An enqueue resolves once its transaction is fsynced; enqueues of the same
 * event-loop turn share that transaction, so under load many requests pay for one fsync.
 *
 * Only counters and the ids of claimed messages live in memory. Claims are not written:
 * after a restart every unfinished message is visible again (at-least-once). One process
 * runs an app on a directory; others (the CLI) may open it at the same time to read, replay
 * or purge dead letters.
 */
export class EmbeddedStore implements Store {
  readonly engine = "embedded";
  readonly durable = true;
  readonly deadLetters: DeadLetterStore;

  private readonly dir: string;
  private readonly maxQueued: number;
  private readonly maxBytes: number | undefined;
  private readonly sweepIntervalMs: number;
  private readonly probeIntervalMs: number;
  private readonly lock: ConsumerLock | undefined;
  private readonly tracker = new QueueTracker();
  private readonly health = new WriteHealth(() => this.startProbe());
  private readonly gauge = new SizeGauge(() => (this.opened ? allDatabases(this.opened.dbs) : []));
  private readonly watchers = new Map<string, Set<() => void>>();
  /**
   * Messages this process committed and nobody claimed yet, by queue and sequence: a claim
   * takes them from here instead of reading and decoding them back from disk. Bounded; after a
   * restart (or past the bound) claims read the disk as usual.
   */
  private readonly handoff = new Map<string, Map<number, QueuedMessage>>();
  private handoffSize = 0;
  private opened: { readonly dbs: EmbeddedDbs; readonly writer: StoreWriter; readonly tag: string } | undefined;
  private wanted = false;
  private sweeper: NodeJS.Timeout | undefined;
  private probe: NodeJS.Timeout | undefined;

  constructor(options: EmbeddedStoreOptions) {
    if (typeof options?.dir !== "string" || options.dir === "") throw new TypeError("EmbeddedStore: dir must be a non-empty string");
    this.dir = options.dir;
    this.maxQueued = options.maxQueued ?? DEFAULT_EMBEDDED_LIMITS.maxQueued;
    this.maxBytes = options.maxBytes ?? DEFAULT_EMBEDDED_LIMITS.maxBytes;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.probeIntervalMs = options.probeIntervalMs ?? 1_000;
    this.lock = options.consumer === false ? undefined : new ConsumerLock(this.dir);
    this.deadLetters = new EmbeddedDeadLetters({
      use: () => this.require(),
      requeue: (queue, message) => this.requeue(queue, message),
    });
  }

  /**
   * Opens the directory. When that fails (a path that cannot be created, no permission) the
   * store does not throw: it stays up refusing work with store_unavailable, which sources
   * answer with 503, and tries again every second; `failure` tells why. It does reject when
   * another live process consumes the directory (DataDirInUseError).
   */
  async open(): Promise<void> {
    if (this.wanted) return;
    if (this.lock) {
      let created = true;
      try {
        mkdirSync(this.dir, { recursive: true });
      } catch {
        created = false; // the open below fails and reports it; there is nothing to lock
      }
      if (created) this.lock.acquire(this.dir);
    }
    this.wanted = true;
    this.tryOpen();
    this.sweeper = setInterval(() => void this.sweepExpired().catch(ignore), this.sweepIntervalMs);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    this.wanted = false;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.stopProbe();
    this.clearHandoff();
    const opened = this.opened;
    this.opened = undefined;
    if (!opened) return this.lock?.release();
    // Let a batch lmdb queued this turn start before closing (closing under it throws).
    await new Promise((resolve) => setImmediate(resolve));
    try {
      await opened.dbs.root.close();
    } finally {
      this.lock?.release();
    }
  }

  admit(queue: string): StoreRefusal | undefined {
    if (!this.opened) return this.health.refusal ?? notOpen();
    const failure = this.health.refusal;
    if (failure) return failure;
    if (this.maxBytes !== undefined && this.gauge.current() >= this.maxBytes) {
      return { code: "store_full", message: `the store holds ${this.maxBytes} bytes, its limit`, retryAfterSeconds: 10 };
    }
    if (this.tracker.count(queue) >= this.maxQueued) {
      return { code: "queue_full", message: `queue "${queue}" holds ${this.maxQueued} messages`, retryAfterSeconds: 1 };
    }
    return undefined;
  }

  async enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    if (!options?.internal) {
      const refusal = this.admit(queue);
      if (refusal) throw this.health.error() ?? new StoreRefusedError(refusal);
    }
    const { dbs, writer, tag } = this.require();
    const seq = this.tracker.allocate(queue);
    // Counted before the commit so that admit sees requests still in flight.
    this.tracker.adjust(queue, 1);
    try {
      await writer.run(() => dbs.ready.put([queue, seq, tag], messageRecord(message)));
    } catch (error) {
      this.tracker.adjust(queue, -1);
      throw error instanceof StoreRefusedError ? error : new StoreRefusedError(toRefusal(error), { cause: error });
    }
    this.inserted(queue, seq, message);
  }

  async claim(queue: string, limit: number): Promise<QueuedMessage[]> {
    const { dbs } = this.require();
    const out: QueuedMessage[] = [];
    if (!(limit > 0)) return out;
    const now = Date.now();
    // Retries that are due first: they have waited their backoff already.
    for (const { key, value } of dbs.delayed.getRange(dueRange(queue, now))) {
      if (out.length >= limit) break;
      if (this.tracker.claimedAt(queue, value.id)) continue;
      this.tracker.claim(queue, value.id, { in: "delayed", key });
      out.push(value);
    }
    if (out.length >= limit) return out;
    let contiguous = true;
    const waiting = this.handoff.get(queue);
    for (const key of dbs.ready.getKeys(readyRange(queue, this.tracker.scanFrom(queue, now)))) {
      const seq = key[1];
      const value = waiting?.get(seq) ?? dbs.ready.get(key);
      if (value === undefined) continue; // removed since the scan began
      const held = this.tracker.claimedAt(queue, value.id);
      if (held) {
        // Claimed already (skip it); or another message with the same id is: leave this one for later.
        if (held.in === "ready" && sameKey(held.key, key)) {
          if (contiguous) this.tracker.advance(queue, seq + 1);
        } else contiguous = false;
        continue;
      }
      if (out.length >= limit) break;
      this.tracker.claim(queue, value.id, { in: "ready", key });
      if (contiguous) this.tracker.advance(queue, seq + 1);
      if (waiting?.delete(seq)) this.handoffSize--;
      out.push(value);
    }
    return out;
  }

  async complete(queue: string, id: string, emit?: EmitRecord): Promise<void> {
    const from = this.tracker.claimedAt(queue, id);
    if (!from && !emit) return;
    const { dbs, writer, tag } = this.require();
    let emitted: { queue: string; seq: number } | undefined;
    if (emit) {
      emitted = { queue: emit.queue, seq: this.tracker.allocate(emit.queue) };
      this.tracker.adjust(emit.queue, 1);
    }
    try {
      await writer.run(() => {
        if (!emit || !emitted) return removeAt(dbs, from);
        const key: ReadyKey = [emitted.queue, emitted.seq, tag];
        // One transaction: the input leaves exactly when its output is recorded.
        return dbs.ready.batch(() => {
          void removeAt(dbs, from);
          void dbs.ready.put(key, messageRecord(emit.message));
        });
      });
    } catch (error) {
      if (emitted) this.tracker.adjust(emitted.queue, -1);
      // A commit that failed gives the message back; a value that cannot be encoded leaves it
      // claimed, for the caller to retry or dead-letter.
      if (error instanceof StoreRefusedError) this.abandon(queue, id);
      throw error;
    }
    if (from && this.tracker.unclaim(queue, id)) this.tracker.adjust(queue, -1);
    if (emitted) this.inserted(emitted.queue, emitted.seq, emit!.message);
  }

  async retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    const { dbs, writer, tag } = this.require();
    const from = this.tracker.claimedAt(queue, message.id);
    const key: DelayedKey = [queue, visibleAt, this.tracker.allocate(queue), tag];
    try {
      await writer.run(() =>
        dbs.delayed.batch(() => {
          void removeAt(dbs, from);
          void dbs.delayed.put(key, messageRecord(message));
        }),
      );
    } catch (error) {
      this.abandon(queue, message.id);
      throw error;
    }
    if (!(from && this.tracker.unclaim(queue, message.id))) this.tracker.adjust(queue, 1);
    if (visibleAt <= Date.now()) this.notify(queue);
  }

  async release(queue: string, ids: readonly string[]): Promise<void> {
    let any = false;
    for (const id of ids) {
      const location = this.tracker.unclaim(queue, id);
      if (location?.in === "ready") this.tracker.rewind(queue, location.key[1]);
      any ||= location !== undefined;
    }
    if (any) this.notify(queue);
  }

  async deadLetter(letter: DeadLetter): Promise<void> {
    const { dbs, writer } = this.require();
    const { queue } = letter;
    const id = letter.message.id;
    const from = this.tracker.claimedAt(queue, id);
    try {
      await writer.run(() =>
        dbs.dead.batch(() => {
          void removeAt(dbs, from);
          void dbs.dead.put(id, deadLetterRecord(letter));
        }),
      );
    } catch (error) {
      this.abandon(queue, id);
      throw error;
    }
    if (from && this.tracker.unclaim(queue, id)) this.tracker.adjust(queue, -1);
  }

  state(namespace: string): StateStore {
    return new EmbeddedState({ use: () => this.require() }, namespace);
  }

  async depth(queue: string): Promise<number> {
    this.require();
    return this.tracker.count(queue);
  }

  watch(queue: string, listener: () => void): () => void {
    let set = this.watchers.get(queue);
    if (!set) this.watchers.set(queue, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  /**
   * Why the store refuses with store_unavailable (the directory cannot be opened, a commit
   * failed), for logs; undefined while it works. Refusals themselves stay vague: they go to
   * senders.
   */
  get failure(): Error | undefined {
    const cause = this.health.cause;
    if (cause === undefined) return undefined;
    return cause instanceof Error ? cause : new Error(String(cause));
  }

  /** Removes expired state entries now (also done every `sweepIntervalMs`); returns how many. */
  async sweepExpired(): Promise<number> {
    if (!this.opened) return 0;
    return sweepExpiredState({ use: () => this.require() });
  }

  private tryOpen(): boolean {
    let dbs: EmbeddedDbs | undefined;
    try {
      dbs = openEnvironment(this.dir);
      this.tracker.reset();
      this.clearHandoff();
      recoverQueues(dbs, this.tracker);
    } catch (error) {
      if (dbs) void dbs.root.close().catch(ignore);
      this.tracker.reset();
      this.health.failed(error);
      return false;
    }
    this.opened = { dbs, writer: new StoreWriter(dbs.root, this.health), tag: newWriterTag() };
    this.health.succeeded();
    this.gauge.invalidate();
    void this.sweepExpired().catch(ignore);
    // Work may be waiting from before: wake whoever listens.
    for (const queue of this.watchers.keys()) this.notify(queue);
    return true;
  }

  /** While the store cannot write or open, try again now and then; a success clears the failure. */
  private startProbe(): void {
    if (this.probe || !this.wanted) return;
    this.probe = setInterval(() => {
      if (!this.wanted) return this.stopProbe();
      if (!this.opened) {
        if (this.tryOpen()) this.stopProbe();
        return;
      }
      if (!this.health.refusal) return this.stopProbe();
      const { dbs, writer } = this.opened;
      writer.run(() => dbs.meta.put("probe", Date.now())).then(() => this.stopProbe(), ignore);
    }, this.probeIntervalMs);
    this.probe.unref();
  }

  private stopProbe(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
  }

  private require(): { readonly dbs: EmbeddedDbs; readonly writer: StoreWriter; readonly tag: string } {
    if (this.opened) return this.opened;
    throw this.health.error() ?? new StoreRefusedError(notOpen());
  }

  private requeue(queue: string, message: QueuedMessage): () => void {
    const { dbs, tag } = this.require();
    const seq = this.tracker.allocate(queue);
    const record = messageRecord(message);
    void dbs.ready.put([queue, seq, tag], record);
    return () => {
      this.tracker.adjust(queue, 1);
      this.inserted(queue, seq, record);
    };
  }

  /** A committed message at `seq` is now visible: claims must look there, listeners may claim it. */
  private clearHandoff(): void {
    this.handoff.clear();
    this.handoffSize = 0;
  }

  private inserted(queue: string, seq: number, message: QueuedMessage): void {
    if (this.handoffSize < HANDOFF_LIMIT) {
      let waiting = this.handoff.get(queue);
      if (!waiting) this.handoff.set(queue, (waiting = new Map()));
      waiting.set(seq, message);
      this.handoffSize++;
    }
    this.tracker.rewind(queue, seq);
    this.notify(queue);
  }

  /** A write about a claimed message failed: hand the message out again later rather than lose it. */
  private abandon(queue: string, id: string): void {
    const location = this.tracker.unclaim(queue, id);
    if (location?.in === "ready") this.tracker.rewind(queue, location.key[1]);
    if (location) this.notify(queue);
  }

  private notify(queue: string): void {
    const set = this.watchers.get(queue);
    if (!set) return;
    for (const listener of set) {
      try {
        listener();
      } catch (error) {
        // A listener's bug must not turn a committed write into a rejection.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

function removeAt(dbs: EmbeddedDbs, location: Location | undefined): Promise<boolean> {
  if (!location) return Promise.resolve(true);
  return location.in === "ready" ? dbs.ready.remove(location.key) : dbs.delayed.remove(location.key);
}

function sameKey(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

function notOpen(): StoreRefusal {
  return { code: "store_unavailable", message: "the store is not open", retryAfterSeconds: 5 };
}
