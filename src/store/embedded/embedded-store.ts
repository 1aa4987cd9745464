import type {
  ClaimedGroups,
  DeadLetter,
  DeadLetterStore,
  EmitRecord,
  GroupRule,
  QueuedMessage,
  QueueStats,
  StateStore,
  Store,
  StoreRefusal,
} from "../store";
import { StoreRefusedError } from "../store-errors";
import { DEFAULT_EMBEDDED_LIMITS } from "../store-limits";
import { EmbeddedDeadLetters } from "./embedded-dead-letters";
import { EmbeddedState, sweepExpiredState } from "./embedded-state";
import { hashCutStateKeys } from "./state-key-upgrade";
import { newWriterTag } from "./keys";
import { allDatabases, openEnvironment, type EmbeddedDbs } from "./lmdb-env";
import { QueueTracker } from "./queue-tracker";
import { recoverQueues } from "./recover-queues";
import { SizeGauge } from "./size-gauge";
import { StoreWriter } from "./store-writer";
import { ConsumerLock } from "./consumer-lock";
import { mkdirSync } from "node:fs";
import { WriteHealth } from "./write-health";
import { DataDirGuard } from "./data-dir-guard";
import { DataDirWatch, DIR_LOST } from "./data-dir-watch";
import { DEFAULT_RESERVE_BYTES, DiskRoom } from "./disk-room";
import { foldIntoBTree, journalDir, openJournal, type OpenedJournal } from "./journal-handoff";
import { peekJournal } from "./journal/peek-journal";
import type { JournalLaneLimits } from "./journal/journal-lane";
import { QueueOperations, type Opened } from "./queue-operations";
import { SettleOperations } from "./settle-operations";
import { GroupOperations } from "./group-operations";
import { silentLogger, type Logger } from "../../util/logger";
import { QueueWatchers } from "../queue-watchers";
import { StoreOpenError } from "./store-open-error";
import { EmbeddedHistory } from "./history/embedded-history";
import type { NoteWriterOptions } from "./history/note-writer";
import { EmbeddedPauses } from "./embedded-pauses";

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
  /**
   * The fast lane of a consumer's new messages: an append-only journal, group-committed, and
   * held in memory until done (see JournalLane). `false` writes every message to the B-tree.
   * Defaults: 10,000 messages, 64 MiB of them in memory (held-message.ts), segments of 64 MiB.
   */
  readonly journal?: false | (Partial<JournalLaneLimits> & { readonly segmentBytes?: number });
  /**
   * Room kept free on the disk (default 128 MiB; 0 turns it off): new work is refused with
   * store_full while less than this is free, so that finished work can still be recorded and
   * free room, and a restart can move the journal into the B-tree. Keep it at least twice the
   * journal's `maxBytes`.
   */
  readonly reserveBytes?: number;
  /** Where the store reports what it finds wrong on disk (damaged segments, a lost directory). */
  readonly logger?: Logger;
  /** How the event history's notes are batched (see NoteWriter): every second, or at 10,000 notes. */
  readonly historyWrites?: NoteWriterOptions;
}

const ignore = (): void => undefined;

/**
 * The durable store, in one directory: an append-only journal for new messages, and lmdb (a
 * memory-mapped B-tree with copy-on-write transactions) for everything else.
 *
 * A new message goes to the journal while its fast lane has room: appended to the current
 * segment, one frame and one fdatasync for all the enqueues of an event-loop turn, and held in
 * memory until its task is done, when a done-marker is appended. That is the common path of a
 * webhook, and it costs a fraction of a B-tree insert and delete. Past the lane's bounds (a
 * backlog), new messages go to the B-tree, where a waiting message costs no memory; retries,
 * dead letters and state live there too. At open, what the journal still holds is moved into
 * the B-tree. Every write resolves once it is fsynced.
 *
 * Claims are not written: after a restart every unfinished message is visible again
 * (at-least-once). One process runs an app on a directory; others (the CLI) may open it at
 * the same time to read, replay or purge dead letters; they never touch the journal.
 */
export class EmbeddedStore implements Store {
  readonly engine = "embedded";
  readonly durable = true;
  readonly deadLetters: DeadLetterStore;
  /** Kept in `<dir>/history/`, written behind the queues (see EmbeddedHistory). */
  readonly history: EmbeddedHistory;
  readonly pauses: EmbeddedPauses;

  private readonly dir: string;
  private readonly maxQueued: number;
  private readonly maxBytes: number | undefined;
  private readonly sweepIntervalMs: number;
  private readonly probeIntervalMs: number;
  private readonly lock: ConsumerLock | undefined;
  private readonly tracker = new QueueTracker();
  /** Of the B-tree (and of opening the directory). */
  private readonly health = new WriteHealth(() => this.startProbe());
  /** Of the journal, apart: one working does not mean the other does. */
  private readonly journalHealth = new WriteHealth(() => this.startProbe());
  private readonly gauge = new SizeGauge(() => (this.opened ? allDatabases(this.opened.dbs) : []));
  private readonly watchers = new QueueWatchers();
  private readonly room: DiskRoom;
  private readonly queues: QueueOperations;
  private readonly settling: SettleOperations;
  private readonly grouping: GroupOperations;
  private opened: Opened | undefined;
  private opening = false;
  private readonly journalOptions: EmbeddedStoreOptions["journal"];
  private readonly logger: Logger;
  private wanted = false;
  private sweeper: NodeJS.Timeout | undefined;
  private probe: NodeJS.Timeout | undefined;
  private readonly dirWatch: DataDirWatch;

  constructor(options: EmbeddedStoreOptions) {
    if (typeof options?.dir !== "string" || options.dir === "") throw new TypeError("EmbeddedStore: dir must be a non-empty string");
    this.dir = options.dir;
    this.maxQueued = options.maxQueued ?? DEFAULT_EMBEDDED_LIMITS.maxQueued;
    this.maxBytes = options.maxBytes ?? DEFAULT_EMBEDDED_LIMITS.maxBytes;
    this.sweepIntervalMs = options.sweepIntervalMs ?? 60_000;
    this.probeIntervalMs = options.probeIntervalMs ?? 1_000;
    this.lock = options.consumer === false ? undefined : new ConsumerLock(this.dir);
    this.journalOptions = options.journal;
    this.logger = options.logger ?? silentLogger;
    this.dirWatch = new DataDirWatch(this.dir, this.logger);
    this.room = new DiskRoom(this.dir, options.reserveBytes ?? DEFAULT_RESERVE_BYTES, () => this.gauge.current());
    const host = {
      use: () => this.require(),
      opened: () => this.opened,
      tracker: this.tracker,
      watchers: this.watchers,
      room: this.room,
      refuseIfDataFileLost: () => this.dirWatch.refuseIfDataFileLost(),
    };
    this.queues = new QueueOperations(host);
    this.settling = new SettleOperations(host, this.queues);
    this.grouping = new GroupOperations(host, this.queues);
    this.history = new EmbeddedHistory(
      { dir: this.dir, logger: this.logger, isOpen: () => this.opened !== undefined, requireOpen: () => void this.require(), hasRoom: (bytes: number) => this.room.historyHasRoomFor(bytes) },
      options.historyWrites,
    );
    this.pauses = new EmbeddedPauses(host);
    this.deadLetters = new EmbeddedDeadLetters({
      use: () => this.require(),
      requeue: (queue, message) => this.queues.requeue(queue, message),
    });
  }

  /**
   * Opens the directory. When that fails (a path that cannot be created, no permission) it
   * rejects with StoreOpenError, one line naming the directory, and holds nothing open; it
   * also rejects when another live process consumes the directory (DataDirInUseError). Once
   * open, a directory that fails or disappears makes the store refuse work with
   * store_unavailable (503) and reopen it by itself.
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
    if (!(await this.tryOpen())) {
      const cause = this.health.cause;
      await this.close();
      throw new StoreOpenError(this.dir, cause);
    }
    this.sweeper = setInterval(() => void this.sweepExpired().catch(ignore), this.sweepIntervalMs);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    // The history's last notes are written while the store is still open.
    await this.history.close().catch((error: unknown) => this.logger.error({ err: error }, "the event history could not be closed cleanly"));
    this.pauses.stop();
    this.wanted = false;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.stopProbe();
    this.dirWatch.stop();
    this.queues.clearHandoff();
    const opened = this.opened;
    this.opened = undefined;
    if (!opened) return this.lock?.release();
    opened.journal?.lane.clear();
    // Let a batch lmdb queued this turn start before closing (closing under it throws).
    await new Promise((resolve) => setImmediate(resolve));
    try {
      await opened.journal?.log.close();
      await opened.dbs.root.close();
    } finally {
      this.lock?.release();
    }
  }

  admit(queue: string): StoreRefusal | undefined {
    if (this.dirWatch.lost) return DIR_LOST;
    if (!this.opened) return this.health.refusal ?? notOpen();
    const failure = this.health.refusal ?? this.journalHealth.refusal;
    if (failure) return failure;
    const full = this.room.refusal();
    if (full) return full;
    if (this.maxBytes !== undefined && this.gauge.current() + (this.opened.journal?.lane.bytes ?? 0) >= this.maxBytes) {
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
      if (refusal) throw this.health.error() ?? this.journalHealth.error() ?? new StoreRefusedError(refusal, { cause: this.dirWatch.lost });
    }
    return this.queues.enqueue(queue, message);
  }

  /** One journal frame, or one LMDB transaction, for all the copies: all or none. */
  async enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    if (!options?.internal) {
      for (const { queue } of copies) {
        const refusal = this.admit(queue);
        if (refusal) throw this.health.error() ?? this.journalHealth.error() ?? new StoreRefusedError(refusal, { cause: this.dirWatch.lost });
      }
    }
    return this.queues.enqueueAll(copies);
  }

  claim(queue: string, limit: number): Promise<QueuedMessage[]> {
    return this.queues.claim(queue, limit);
  }

  complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    return this.settling.complete(queue, id, emit);
  }

  claimGroups(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> {
    return this.grouping.claimGroups(queue, rule, limit);
  }

  completeGroup(queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    return this.grouping.completeGroup(queue, ids, emit);
  }

  retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    return this.settling.retryLater(queue, message, visibleAt);
  }

  release(queue: string, ids: readonly string[]): Promise<void> {
    return this.queues.release(queue, ids);
  }

  deadLetter(letter: DeadLetter): Promise<void> {
    return this.settling.deadLetter(letter);
  }

  state(namespace: string): StateStore {
    return new EmbeddedState({ use: () => this.require() }, namespace);
  }

  depth(queue: string): Promise<number> {
    return this.queues.depth(queue);
  }

  stats(queue: string): Promise<QueueStats> {
    return this.queues.stats(queue);
  }

  /** Messages group claims read from disk since this store was made (for tests: a claim reads what it hands out, not the backlog). */
  get groupMessagesRead(): number {
    return this.grouping.messagesRead;
  }

  queueNames(): Promise<string[]> {
    return this.queues.queueNames();
  }

  watch(queue: string, listener: () => void): () => void {
    return this.watchers.watch(queue, listener);
  }

  /**
   * Why the store refuses with store_unavailable (the directory cannot be opened, a commit
   * failed), for logs; undefined while it works. Refusals themselves stay vague: they go to
   * senders.
   */
  get failure(): Error | undefined {
    if (this.dirWatch.lost) return this.dirWatch.lost;
    const cause = this.health.cause ?? this.journalHealth.cause;
    if (cause === undefined) return undefined;
    return cause instanceof Error ? cause : new Error(String(cause));
  }

  /** Removes expired state entries now (also done every `sweepIntervalMs`); returns how many. */
  async sweepExpired(): Promise<number> {
    if (!this.opened) return 0;
    return sweepExpiredState({ use: () => this.require() });
  }

  private async tryOpen(): Promise<boolean> {
    if (this.opening) return false;
    this.opening = true;
    try {
      return await this.openNow();
    } finally {
      this.opening = false;
    }
  }

  private async openNow(): Promise<boolean> {
    let dbs: EmbeddedDbs | undefined;
    let journal: OpenedJournal | undefined;
    let guard: DataDirGuard | undefined;
    let peeked: Opened["peeked"];
    try {
      dbs = openEnvironment(this.dir);
      const rehashed = hashCutStateKeys(dbs);
      if (rehashed > 0) this.logger.info({ entries: rehashed }, "state entries written by an earlier version under keys lmdb reads back cut apart moved to their hashed keys");
      this.tracker.reset();
      this.queues.clearHandoff();
      // Only the consumer touches the journal: what it still holds from before joins the B-tree.
      if (this.lock) await foldIntoBTree(this.dir, dbs, this.logger);
      recoverQueues(dbs, this.tracker);
      // Another process's journal (running, or stopped before its next open folds it) is read, not touched.
      peeked = this.lock ? undefined : peekJournal(journalDir(this.dir), dbs);
      for (const [queue, held] of peeked ?? []) this.tracker.recovered(queue, held.maxSeq, held.count);
      if (this.lock && this.journalOptions !== false) {
        journal = openJournal(this.dir, this.journalOptions, {
          journalHealth: this.journalHealth,
          room: this.room,
          dirLost: (error) => this.dirWatch.dirLost(error),
        });
      }
      guard = new DataDirGuard(this.dir, this.lock ? ["data.mdb", "consumer.lock"] : ["data.mdb"]);
    } catch (error) {
      if (dbs) void dbs.root.close().catch(ignore);
      void journal?.log.close().catch(ignore);
      this.tracker.reset();
      this.health.failed(error);
      return false;
    }
    if (!this.wanted) {
      // Closed while the journal was being folded.
      guard.close();
      await journal?.log.close();
      await dbs.root.close();
      return false;
    }
    this.opened = { dbs, writer: new StoreWriter(dbs.root, this.health), tag: newWriterTag(), journal, peeked };
    this.health.succeeded();
    this.journalHealth.succeeded();
    this.dirWatch.start(guard);
    this.gauge.invalidate();
    void this.sweepExpired().catch(ignore);
    // Work may be waiting from before: wake whoever listens.
    this.watchers.notifyAll();
    return true;
  }

  /** While the store cannot write or open, try again now and then; a success clears the failure. */
  private startProbe(): void {
    if (this.probe || !this.wanted) return;
    this.probe = setInterval(() => {
      if (!this.wanted) return this.stopProbe();
      if (!this.opened) {
        void this.tryOpen().then((opened) => opened && this.stopProbe());
        return;
      }
      if (!this.health.refusal && !this.journalHealth.refusal) return this.stopProbe();
      const { dbs, writer, journal } = this.opened;
      // Whichever failed must write again: the B-tree, or the journal (an empty frame, synced).
      if (this.health.refusal) writer.run(() => dbs.meta.put("probe", Date.now())).catch(ignore);
      if (this.journalHealth.refusal) journal?.log.append([]).catch(ignore);
    }, this.probeIntervalMs);
    this.probe.unref();
  }

  private stopProbe(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
  }

  private require(): Opened {
    if (this.opened) return this.opened;
    throw this.health.error() ?? new StoreRefusedError(notOpen());
  }
}

function notOpen(): StoreRefusal {
  return { code: "store_unavailable", message: "the store is not open", retryAfterSeconds: 5 };
}
