import type {
  DeadLetter,
  DeadLetterStore,
  EmitRecord,
  QueuedMessage,
  QueueStats,
  StateStore,
  Store,
  StoreRefusal,
} from "../store";
import { StoreRefusedError, toRefusal } from "../store-errors";
import { DEFAULT_EMBEDDED_LIMITS } from "../store-limits";
import { EmbeddedDeadLetters } from "./embedded-dead-letters";
import { EmbeddedState, sweepExpiredState } from "./embedded-state";
import { dueRange, laterRange, newWriterTag, readyRange, type DelayedKey, type Location, type ReadyKey } from "./keys";
import { allDatabases, openEnvironment, type EmbeddedDbs } from "./lmdb-env";
import { QueueTracker } from "./queue-tracker";
import { advanceKey, placeKeyed, type Promoted } from "./key-lines";
import { embeddedQueueStats } from "./queue-stats";
import { deadLetterRecord, messageRecord } from "./records";
import { recoverQueues } from "./recover-queues";
import { SizeGauge } from "./size-gauge";
import { StoreWriter } from "./store-writer";
import { ConsumerLock } from "./consumer-lock";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { WriteHealth } from "./write-health";
import { DataDirGuard, DataDirLostError } from "./data-dir-guard";
import { DEFAULT_RESERVE_BYTES, DiskRoom } from "./disk-room";
import { foldJournal, type FoldReport } from "./journal/fold-journal";
import { DEFAULT_LANE_LIMITS, JournalLane, type JournalLaneLimits, type LaneEntry } from "./journal/journal-lane";
import { JournalLog } from "./journal/journal-log";
import { silentLogger, type Logger } from "../../util/logger";
import { QueueWatchers } from "../queue-watchers";

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
   * Defaults: 10,000 messages, 64 MiB of them, segments of 64 MiB.
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
}

/** Where the store is at work: the B-tree environment and, for a consumer, the journal. */
interface Opened {
  readonly dbs: EmbeddedDbs;
  readonly writer: StoreWriter;
  readonly tag: string;
  readonly journal: { readonly log: JournalLog; readonly lane: JournalLane } | undefined;
}

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

/** How often the store checks that its directory is still the one it opened. */
const DIR_CHECK_MS = 500;

const DIR_LOST: StoreRefusal = { code: "store_unavailable", message: "the store's data directory is gone", retryAfterSeconds: 30 };

const ignore = (): void => undefined;

/** Messages kept in memory between their commit and their claim (beyond it, claims read disk). */
const HANDOFF_LIMIT = 10_000;

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
  /**
   * Messages this process committed and nobody claimed yet, by queue and sequence: a claim
   * takes them from here instead of reading and decoding them back from disk. Bounded; after a
   * restart (or past the bound) claims read the disk as usual.
   */
  private readonly handoff = new Map<string, Map<number, QueuedMessage>>();
  private handoffSize = 0;
  private opened: Opened | undefined;
  private opening = false;
  private readonly journalOptions: EmbeddedStoreOptions["journal"];
  private readonly logger: Logger;
  private wanted = false;
  private sweeper: NodeJS.Timeout | undefined;
  private probe: NodeJS.Timeout | undefined;
  private guard: { readonly files: DataDirGuard; readonly timer: NodeJS.Timeout } | undefined;
  /** The directory was deleted or replaced: refused for good (until closed and opened again). */
  private lost: DataDirLostError | undefined;

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
    this.room = new DiskRoom(this.dir, options.reserveBytes ?? DEFAULT_RESERVE_BYTES, () => this.gauge.current());
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
    await this.tryOpen();
    this.sweeper = setInterval(() => void this.sweepExpired().catch(ignore), this.sweepIntervalMs);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    this.wanted = false;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.stopProbe();
    this.stopGuard();
    this.clearHandoff();
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
    if (this.lost) return DIR_LOST;
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
      if (refusal) throw this.health.error() ?? this.journalHealth.error() ?? new StoreRefusedError(refusal, { cause: this.lost });
    }
    const { dbs, writer, tag, journal } = this.require();
    const seq = this.tracker.allocate(queue);
    // Counted before the commit so that admit sees requests still in flight.
    this.tracker.adjust(queue, 1);
    if (message.orderingKey !== undefined) return this.enqueueKeyed(dbs, writer, [queue, seq, tag], message);
    // A disk low on room keeps it for done-markers: new messages go to the B-tree's free pages.
    if (journal?.lane.hasRoom(message) && !this.room.diskLow()) {
      try {
        await journal.lane.enqueue(queue, seq, message);
      } catch (error) {
        this.tracker.adjust(queue, -1);
        throw asRefusal(error);
      }
      return this.notify(queue);
    }
    try {
      await writer.run(() => dbs.ready.put([queue, seq, tag], messageRecord(message)));
    } catch (error) {
      this.tracker.adjust(queue, -1);
      throw asRefusal(error);
    }
    this.refuseIfDataFileLost();
    this.inserted(queue, seq, message);
  }

  /** Committed into a deleted file is not committed: never acknowledged. */
  private refuseIfDataFileLost(): void {
    const lost = this.lost ?? this.guard?.files.dataFileDeleted();
    if (lost) {
      this.dirLost(lost);
      throw new StoreRefusedError(DIR_LOST, { cause: lost });
    }
  }

  /** A message with an ordering key: to `ready` as its key's head, or held back (key-lines.ts). */
  private async enqueueKeyed(dbs: EmbeddedDbs, writer: StoreWriter, at: ReadyKey, message: QueuedMessage): Promise<void> {
    const [queue, seq] = at;
    let claimable: boolean;
    try {
      claimable = await writer.run(() => dbs.ready.transaction(() => placeKeyed(dbs, at, message, (seq) => this.seqAbove(queue, seq))));
    } catch (error) {
      this.tracker.adjust(queue, -1);
      throw asRefusal(error);
    }
    this.refuseIfDataFileLost();
    if (claimable) this.inserted(queue, seq, message);
  }

  async claim(queue: string, limit: number): Promise<QueuedMessage[]> {
    const { dbs, journal, tag } = this.require();
    const out: QueuedMessage[] = [];
    if (!(limit > 0)) return out;
    const now = Date.now();
    // Retries that are due first: they have waited their backoff already.
    if (this.tracker.delayedMayBeDue(queue, now)) this.claimDue(dbs, queue, now, limit, out);
    if (out.length >= limit) return out;

    // The B-tree's waiting messages and the journal's, merged in sequence order. The B-tree is
    // read only when it may hold some: a range scan per claim is not free.
    const lane = journal?.lane.waitingIn(queue);
    const fromLane = lane && lane.size > 0 ? lane.values() : undefined;
    let nextInLane = fromLane?.next().value as LaneEntry | undefined;
    const takeLaneBefore = (seq: number): void => {
      while (nextInLane && nextInLane.seq < seq && out.length < limit) {
        const entry: LaneEntry = nextInLane;
        nextInLane = fromLane!.next().value as LaneEntry | undefined;
        // A message with the same id already claimed: this one waits its turn.
        if (this.tracker.claimedAt(queue, entry.message.id)) continue;
        journal!.lane.claim(entry);
        this.tracker.claim(queue, entry.message.id, { in: "journal", entryId: entry.entryId });
        out.push(entry.message);
      }
    };
    const from = this.tracker.readyScanFrom(queue, now);
    if (from !== undefined) {
      let contiguous = true;
      let exhausted = true;
      const waiting = this.handoff.get(queue);
      for (const key of dbs.ready.getKeys(readyRange(queue, from))) {
        const seq = key[1];
        takeLaneBefore(seq);
        if (out.length >= limit) {
          exhausted = false;
          break;
        }
        // The hand-off holds this process's messages: another process's key may share a seq.
        const mine = key[2] === tag;
        const value = (mine ? waiting?.get(seq) : undefined) ?? dbs.ready.get(key);
        if (value === undefined) continue; // removed since the scan began
        const held = this.tracker.claimedAt(queue, value.id);
        if (held) {
          // Claimed already (skip it); or another message with the same id is: leave this one for later.
          if (held.in === "ready" && sameKey(held.key, key)) {
            if (contiguous) this.tracker.advance(queue, seq + 1);
          } else contiguous = false;
          continue;
        }
        this.tracker.claim(queue, value.id, value.orderingKey === undefined ? { in: "ready", key } : { in: "ready", key, orderingKey: value.orderingKey });
        if (contiguous) this.tracker.advance(queue, seq + 1);
        if (mine && waiting?.delete(seq)) this.handoffSize--;
        out.push(value);
      }
      // Every waiting message of the B-tree is claimed now: the next claims need not look.
      if (exhausted && contiguous) this.tracker.readyDrained(queue);
    }
    takeLaneBefore(Infinity);
    return out;
  }

  /** Claims due retries into `out`; notes when the next one falls due. */
  private claimDue(dbs: EmbeddedDbs, queue: string, now: number, limit: number, out: QueuedMessage[]): void {
    for (const { key, value } of dbs.delayed.getRange(dueRange(queue, now))) {
      if (out.length >= limit) return;
      if (this.tracker.claimedAt(queue, value.id)) continue;
      this.tracker.claim(queue, value.id, value.orderingKey === undefined ? { in: "delayed", key } : { in: "delayed", key, orderingKey: value.orderingKey });
      out.push(value);
    }
    let next = Infinity;
    for (const key of dbs.delayed.getKeys(laterRange(queue, now))) next = key[1];
    this.tracker.delayedScanned(queue, next);
  }

  async complete(queue: string, id: string, emit?: EmitRecord): Promise<void> {
    const from = this.tracker.claimedAt(queue, id);
    if (!from && !emit) return;
    const { dbs, writer, tag, journal } = this.require();
    const keyedEmit = emit?.message.orderingKey !== undefined;
    if (from?.in === "journal" && journal && !keyedEmit) return this.completeFromJournal(queue, id, from.entryId, journal, emit);
    let emitted: { queue: string; seq: number } | undefined;
    if (emit) {
      emitted = { queue: emit.queue, seq: this.tracker.allocate(emit.queue) };
      this.tracker.adjust(emit.queue, 1);
    }
    const keyedInput = from?.in !== "journal" ? from?.orderingKey : undefined;
    let promoted: Promoted | undefined;
    let emitClaimable = true;
    try {
      await writer.run<unknown>(() => {
        if (keyedInput !== undefined || keyedEmit) {
          // Reads the key lines: a transaction, so that nobody changes them in between.
          return dbs.ready.transaction(() => {
            void removeAt(dbs, from);
            if (keyedInput !== undefined) promoted = advanceKey(dbs, queue, keyedInput);
            if (!emit || !emitted) return;
            const key: ReadyKey = [emitted.queue, emitted.seq, tag];
            if (keyedEmit) emitClaimable = placeKeyed(dbs, key, emit.message, (seq) => this.seqAbove(emit.queue, seq));
            else void dbs.ready.put(key, messageRecord(emit.message));
          });
        }
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
    // An input of the journal with a keyed output: the output is on disk, now the done-marker.
    await this.leftJournal(from);
    if (from && this.tracker.unclaim(queue, id)) this.tracker.adjust(queue, -1);
    if (promoted) this.promoted(queue, promoted);
    if (emitted && emitClaimable) this.inserted(emitted.queue, emitted.seq, emit!.message);
  }

  /** A held-back message became its key's head: claims must look at its place, listeners may claim it. */
  private promoted(queue: string, { key, message }: Promoted): void {
    const [, seq, writer] = key;
    if (writer === this.opened?.tag) return this.inserted(queue, seq, message);
    this.tracker.rewind(queue, seq);
    this.notify(queue);
  }

  /**
   * A message of the journal is done: a done-marker, in the next frame. With an output, the
   * marker and the output go in one frame: on disk together or not at all.
   */
  private async completeFromJournal(
    queue: string,
    id: string,
    entryId: number,
    journal: NonNullable<Opened["journal"]>,
    emit: EmitRecord | undefined,
  ): Promise<void> {
    const { lane } = journal;
    if (!emit) {
      try {
        await lane.done(entryId);
      } catch (error) {
        this.abandon(queue, id);
        throw error;
      }
      return this.finished(queue, id);
    }
    const seq = this.tracker.allocate(emit.queue);
    this.tracker.adjust(emit.queue, 1);
    try {
      // Into the journal even past its bounds: the input leaves it in the same frame, so it
      // holds no more than before, and the two stay one atomic step.
      await lane.doneAndEnqueue(entryId, emit.queue, seq, emit.message);
      this.notify(emit.queue);
    } catch (error) {
      this.tracker.adjust(emit.queue, -1);
      // As for the B-tree: a failed write gives the message back; a value that cannot be
      // encoded leaves it claimed, for the runner to retry or dead-letter.
      if (error instanceof StoreRefusedError) this.abandon(queue, id);
      throw error;
    }
    this.finished(queue, id);
  }

  /** Forgets the claim of a finished message and counts it out of its queue. */
  private finished(queue: string, id: string): void {
    if (this.tracker.unclaim(queue, id)) this.tracker.adjust(queue, -1);
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
    await this.leftJournal(from);
    this.tracker.delayedDueAt(queue, visibleAt);
    if (!(from && this.tracker.unclaim(queue, message.id))) this.tracker.adjust(queue, 1);
    if (visibleAt <= Date.now()) this.notify(queue);
  }

  async release(queue: string, ids: readonly string[]): Promise<void> {
    let any = false;
    for (const id of ids) {
      const location = this.tracker.unclaim(queue, id);
      this.unclaimed(queue, location);
      any ||= location !== undefined;
    }
    if (any) this.notify(queue);
  }

  async deadLetter(letter: DeadLetter): Promise<void> {
    const { dbs, writer } = this.require();
    const { queue } = letter;
    const id = letter.message.id;
    const from = this.tracker.claimedAt(queue, id);
    const keyed = from?.in !== "journal" ? from?.orderingKey : undefined;
    let promoted: Promoted | undefined;
    try {
      await writer.run<unknown>(() => {
        const write = () => {
          void removeAt(dbs, from);
          void dbs.dead.put(id, deadLetterRecord(letter));
          // A dead letter leaves the queue: the next message of its key goes ahead.
          if (keyed !== undefined) promoted = advanceKey(dbs, queue, keyed);
        };
        return keyed === undefined ? dbs.dead.batch(write) : dbs.dead.transaction(write);
      });
    } catch (error) {
      this.abandon(queue, id);
      throw error;
    }
    await this.leftJournal(from);
    if (from && this.tracker.unclaim(queue, id)) this.tracker.adjust(queue, -1);
    if (promoted) this.promoted(queue, promoted);
  }

  /**
   * A message of the journal now lives in the B-tree (as a retry or a dead letter): its
   * done-marker follows, and is waited for. A crash between the two writes (a frame's time)
   * leaves it in both places, and it is delivered once more (at-least-once). If the marker
   * cannot be written, the message is let go of all the same: it is safe in the B-tree.
   */
  private async leftJournal(from: Location | undefined): Promise<void> {
    const lane = this.opened?.journal?.lane;
    if (from?.in !== "journal" || !lane) return;
    await lane.done(from.entryId).catch(() => lane.moved(from.entryId));
  }

  state(namespace: string): StateStore {
    return new EmbeddedState({ use: () => this.require() }, namespace);
  }

  async depth(queue: string): Promise<number> {
    this.require();
    return this.tracker.count(queue);
  }

  async stats(queue: string): Promise<QueueStats> {
    const { dbs, journal } = this.require();
    return embeddedQueueStats(dbs, this.tracker, journal?.lane, queue);
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
    if (this.lost) return this.lost;
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
    let journal: Opened["journal"];
    let guard: DataDirGuard | undefined;
    try {
      dbs = openEnvironment(this.dir);
      this.tracker.reset();
      this.clearHandoff();
      // Only the consumer touches the journal: what it still holds from before joins the B-tree.
      if (this.lock) this.reportFold(await foldJournal(this.journalDir, dbs, join(this.dir, "quarantine")));
      recoverQueues(dbs, this.tracker);
      if (this.lock && this.journalOptions !== false) journal = this.openJournal();
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
    this.opened = { dbs, writer: new StoreWriter(dbs.root, this.health), tag: newWriterTag(), journal };
    this.health.succeeded();
    this.journalHealth.succeeded();
    this.lost = undefined;
    this.startGuard(guard);
    this.gauge.invalidate();
    void this.sweepExpired().catch(ignore);
    // Work may be waiting from before: wake whoever listens.
    this.watchers.notifyAll();
    return true;
  }

  private reportFold(report: FoldReport): void {
    for (const segment of report.damaged) {
      this.logger.error(
        {
          dir: this.dir,
          quarantinedAs: segment.quarantinedAs,
          framesRecovered: segment.framesRecovered,
          bytesSkipped: segment.bytesSkipped,
          header: segment.header,
        },
        "a journal segment was damaged: every frame that passed its checksum was recovered, the bytes between were skipped, and the file was moved to the quarantine folder",
      );
    }
  }

  private get journalDir(): string {
    return join(this.dir, "journal");
  }

  private openJournal(): NonNullable<Opened["journal"]> {
    const options = this.journalOptions || {};
    const log = new JournalLog({
      dir: this.journalDir,
      epoch: randomBytes(6).toString("hex"),
      segmentBytes: options.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
      onFailure: (error) => {
        if (error instanceof DataDirLostError) this.dirLost(error);
        this.journalHealth.failed(error);
      },
      onSuccess: () => this.journalHealth.succeeded(),
    });
    const lane = new JournalLane(log, {
      maxMessages: options.maxMessages ?? DEFAULT_LANE_LIMITS.maxMessages,
      maxBytes: options.maxBytes ?? DEFAULT_LANE_LIMITS.maxBytes,
    }, (bytes) => this.room.hasRoomFor(bytes));
    return { log, lane };
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

  private startGuard(files: DataDirGuard): void {
    const timer = setInterval(() => {
      const lost = files.check();
      if (lost) this.dirLost(lost);
    }, DIR_CHECK_MS);
    timer.unref();
    this.guard = { files, timer };
  }

  private stopGuard(): void {
    if (!this.guard) return;
    clearInterval(this.guard.timer);
    this.guard.files.close();
    this.guard = undefined;
  }

  /**
   * What was written since the directory went is in deleted files, and goes with the process:
   * nothing more is acknowledged, for good. A new directory is a new, empty store, which only a
   * restart may start on.
   */
  private dirLost(error: DataDirLostError): void {
    if (this.lost) return;
    this.lost = error;
    this.stopGuard();
    this.logger.error(
      { dir: this.dir, reason: error.reason },
      "the data directory was deleted or replaced while the store had it open: every webhook is answered 503 from now on; restart the app once the directory is back (or to start empty)",
    );
  }

  private stopProbe(): void {
    if (this.probe) clearInterval(this.probe);
    this.probe = undefined;
  }

  private require(): Opened {
    if (this.opened) return this.opened;
    throw this.health.error() ?? new StoreRefusedError(notOpen());
  }

  private requeue(queue: string, message: QueuedMessage): () => void {
    const { dbs, tag } = this.require();
    const seq = this.tracker.allocate(queue);
    const record = messageRecord(message);
    // A replay is a new arrival: at the end of the queue, and of its key's line.
    let claimable = true;
    if (message.orderingKey !== undefined) claimable = placeKeyed(dbs, [queue, seq, tag], message, (above) => this.seqAbove(queue, above));
    else void dbs.ready.put([queue, seq, tag], record);
    return () => {
      this.tracker.adjust(queue, 1);
      if (claimable) this.inserted(queue, seq, record);
    };
  }

  /** A sequence number of `queue` past `seq` (and past every one this process gave out). */
  private seqAbove(queue: string, seq: number): number {
    this.tracker.recovered(queue, seq, 0);
    return this.tracker.allocate(queue);
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
    this.unclaimed(queue, location);
    if (location) this.notify(queue);
  }

  /** A message that was claimed is claimable again where it is. */
  private unclaimed(queue: string, location: Location | undefined): void {
    if (location?.in === "ready") this.tracker.rewind(queue, location.key[1]);
    else if (location?.in === "delayed") this.tracker.delayedDueAt(queue, location.key[1]);
    else if (location?.in === "journal") this.opened?.journal?.lane.release(location.entryId);
  }

  private notify(queue: string): void {
    this.watchers.notify(queue);
  }
}

/** Removes a claimed message from the B-tree; one in the journal gets a done-marker instead. */
function removeAt(dbs: EmbeddedDbs, location: Location | undefined): Promise<boolean> {
  if (!location || location.in === "journal") return Promise.resolve(true);
  return location.in === "ready" ? dbs.ready.remove(location.key) : dbs.delayed.remove(location.key);
}

function asRefusal(error: unknown): StoreRefusedError {
  return error instanceof StoreRefusedError ? error : new StoreRefusedError(toRefusal(error), { cause: error });
}

function sameKey(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

function notOpen(): StoreRefusal {
  return { code: "store_unavailable", message: "the store is not open", retryAfterSeconds: 5 };
}
