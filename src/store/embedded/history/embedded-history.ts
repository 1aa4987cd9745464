import type { ActivityRow, EventNote, HistoryEvent, HistoryPage, HistoryQuery, HistoryStore, RunNote } from "../../history";
import { checkHistoryQuery } from "../../history-query";
import type { Logger } from "../../../util/logger";
import { randomBytes } from "node:crypto";
import { StoreWriter } from "../store-writer";
import { WriteHealth } from "../write-health";
import { RateLimit } from "../../../util/rate-limit";
import { settledWithin } from "../../../util/settled-within";
import { applyNotes, type Touched } from "./apply-notes";
import { statusCode, summaryRecord, type SummaryRecord } from "./history-records";

const PENDING = statusCode("pending");
const FAILED = statusCode("failed");
import { activityOf } from "./history-activity";
import { entryCount, historyDatabases, historyExists, openHistoryEnvironment, type HistoryDbs } from "./history-env";
import { pruneHistory } from "./history-prune";
import { getEvent, listEvents } from "./history-reads";
import { NoteWriter, type EventHead, type Note, type NoteWriterOptions } from "./note-writer";

/**
 * A key of the index no event id takes: a number each batch writes, so that a writer finds out
 * whether another one (the app, a CLI) wrote since its own last batch.
 */
const WRITER_STAMP = "\u0000writer";

export interface EmbeddedHistoryHost {
  /** The store's data directory. */
  readonly dir: string;
  readonly logger: Logger;
  /** Whether the store is open: the history is used only then. */
  isOpen(): boolean;
  /** Throws the store's refusal when it is not open (reads on a closed store). */
  requireOpen(): void;
  /** Whether the disk has room for `bytes` more of history without taking the queues' room. */
  hasRoom?(bytes: number): boolean;
}

/**
 * Longest `close` waits for the last notes and for lmdb: a history failing on a full disk never
 * holds up a stop. (After a failed commit, lmdb-js's close waits on that batch for good.)
 */
const CLOSE_TIMEOUT_MS = 1_000;

/**
 * The embedded store's event history, in its own LMDB environment under `<data dir>/history/`
 * (history-env.ts), written behind the queues by a NoteWriter: one transaction per batch of
 * notes, a first note waiting at most `intervalMs` (1 s), the next batch `gapMs` (50 ms) after
 * the last commit while notes keep coming, or at once when `batchNotes` (10,000) wait. A commit
 * writes every page it touched: fewer, larger batches write each page once for many events. A
 * crash (even SIGKILL) loses at most the notes of the batch not yet committed.
 * Queues and history never share a transaction, so an event is never lost with its note.
 *
 * Layout (named databases): `timeline` [receivedAt, id] → the whole event (origin, name, each
 * delivery's status, attempts and last error, its runs, the ids of its children and replays,
 * and its payload and raw bytes encoded apart), read backwards for newest-first pages and
 * forwards for pruning; `index` id → receivedAt; `early` runs whose event is not written yet;
 * `activity` [minute, task, source, writer] → counts by status, kept as runs move deliveries
 * between statuses. A webhook body its raw bytes rebuild is written once, as those bytes.
 * An event and the runs noted in the same batch are one write, and its index entry another.
 *
 * The environment is opened on first use: an app with the history off never creates it, and a
 * process that only reads (the CLI on a directory an app runs on) finds no history rather than
 * making an empty one. LMDB lets several processes read and write one environment at once
 * (readers never wait), so the CLI reads the history while the app writes it.
 */
export class EmbeddedHistory implements HistoryStore {
  private dbs: HistoryDbs | undefined;
  /** lmdb's batch promise guarded, as for the queues' writes (see StoreWriter). */
  private writes: StoreWriter | undefined;
  /** This process's activity rows (see applyNotes). */
  private readonly tag = randomBytes(4).toString("hex");
  private readonly unencodable = new RateLimit();
  /**
   * The last batch's events as written (its summaries, runs and links): most runs are noted in
   * the batch after their event's, and find it here instead of reading it back. Only this
   * process's runs change a summary; another process (the CLI) only adds events and replay links.
   */
  private recent: ReadonlyMap<string, Touched> = new Map();
  /** The stamp this process's last batch left (see WRITER_STAMP). */
  private stamp: number | undefined;
  private readonly writer: NoteWriter;

  constructor(
    private readonly host: EmbeddedHistoryHost,
    options?: NoteWriterOptions,
  ) {
    this.writer = new NoteWriter((notes) => this.write(notes), () => host.isOpen(), host.logger, options, (bytes) => host.hasRoom?.(bytes) ?? true);
  }

  /**
   * The record is made now (the payload encoded, its body checked against the raw bytes): the
   * task that receives the same object may change it before the batch is written. A payload
   * that cannot be encoded is logged and not kept; the caller is not told.
   */
  noteEvent(note: EventNote): void {
    let record: SummaryRecord;
    try {
      record = summaryRecord(note);
    } catch (error) {
      const pass = this.unencodable.pass();
      if (pass) this.host.logger.error({ err: error, eventId: note.id, suppressed: pass.suppressed }, "the event history cannot keep an event: its payload cannot be encoded");
      return;
    }
    const event: { -readonly [K in keyof EventHead]: EventHead[K] } = { id: note.id, receivedAt: note.receivedAt, source: note.origin.kind === "webhook" ? note.origin.source : "" };
    if (note.parentId !== undefined) event.parentId = note.parentId;
    if (note.replayOf !== undefined) event.replayOf = note.replayOf;
    this.writer.add({ event, record });
  }

  noteRun(note: RunNote): void {
    this.writer.add({ run: note });
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  async list(query: HistoryQuery = {}): Promise<HistoryPage> {
    checkHistoryQuery(query);
    return listEvents(this.forRead(), query);
  }

  async get(id: string): Promise<HistoryEvent | undefined> {
    return getEvent(this.forRead(), id);
  }

  async activity(since: number, bucketMs: number): Promise<ActivityRow[]> {
    return activityOf(this.forRead(), since, bucketMs);
  }

  async prune(before: number, maxEvents?: number): Promise<number> {
    if (!Number.isFinite(before)) throw new TypeError(`before must be a time in milliseconds since the epoch, got ${String(before)}`);
    if (maxEvents !== undefined && (!Number.isInteger(maxEvents) || maxEvents < 0)) throw new TypeError(`maxEvents must be a whole number of events, got ${String(maxEvents)}`);
    const dbs = this.forRead();
    if (dbs === undefined) return 0;
    // Events pruned must not come back from the cache with a late run.
    this.recent = new Map();
    try {
      return await pruneHistory(dbs, before, maxEvents);
    } finally {
      this.recent = new Map();
    }
  }

  async size(): Promise<{ events: number; bytes: number }> {
    const dbs = this.forRead();
    if (dbs === undefined) return { events: 0, bytes: 0 };
    let bytes = 0;
    for (const db of historyDatabases(dbs)) {
      const stats = db.getStats() as { pageSize?: number; treeBranchPageCount?: number; treeLeafPageCount?: number; overflowPages?: number };
      bytes += ((stats.treeBranchPageCount ?? 0) + (stats.treeLeafPageCount ?? 0) + (stats.overflowPages ?? 0)) * (stats.pageSize ?? 4096);
    }
    return { events: entryCount(dbs), bytes };
  }

  /**
   * Writes what is pending and closes the environment (the store closes). Notes made later wait
   * for it to open again. The history is best-effort: what does not finish within
   * CLOSE_TIMEOUT_MS (a write failing on a full disk) is given up and logged, so the store's
   * close goes on with the queues.
   */
  async close(): Promise<void> {
    const flushed = await settledWithin(this.writer.flush(), CLOSE_TIMEOUT_MS);
    this.writer.stop();
    const dbs = this.dbs;
    this.dbs = undefined;
    this.writes = undefined;
    this.recent = new Map();
    const closed = dbs ? await settledWithin(dbs.root.close(), CLOSE_TIMEOUT_MS) : true;
    if (!flushed || !closed) {
      this.host.logger.error({ timeoutMs: CLOSE_TIMEOUT_MS, flushed, closed }, "the event history did not finish writing or closing in time and is left behind; the queues are not affected");
    }
  }

  private async write(notes: readonly Note[]): Promise<void> {
    if (this.dbs === undefined) {
      const dbs = openHistoryEnvironment(this.host.dir);
      this.dbs = dbs;
      this.writes = new StoreWriter(dbs.root, new WriteHealth(() => undefined));
    }
    const dbs = this.dbs;
    const recent = this.recent;
    // Used once: on failure the batch is tried again from what is on disk.
    this.recent = new Map();
    let touched: Map<string, Touched> | undefined;
    // Every write's promise is held (Promise.all): a failed commit rejects them all, handled here.
    const stamp = Math.random();
    await this.writes!.run(() => {
      // Another writer (a CLI replay adding a link to its original) wrote since this process's
      // last batch: the summaries held from it may be stale, and would overwrite that write.
      const usable = dbs.index.get(WRITER_STAMP) === this.stamp ? recent : new Map<string, Touched>();
      const batch = applyNotes(dbs, notes, this.tag, usable);
      touched = batch.touched;
      return Promise.all([...batch.writes, dbs.index.put(WRITER_STAMP, stamp)]);
    });
    this.stamp = stamp;
    this.recent = unsettled(touched!);
  }

  /** The environment, opened when it exists; undefined when no history was ever written here. */
  private forRead(): HistoryDbs | undefined {
    this.host.requireOpen();
    if (this.dbs === undefined && historyExists(this.host.dir)) {
      this.dbs = openHistoryEnvironment(this.host.dir);
      this.writes = new StoreWriter(this.dbs.root, new WriteHealth(() => undefined));
    }
    return this.dbs;
  }
}

/**
 * Of a batch's events, those a later run may still change: a delivery pending or failed (it
 * retries). The rest are not held for the next batch (a late run, a dead letter replayed, reads
 * its event back): holding every event of a batch kept them alive long enough to be copied to
 * the old generation of the heap.
 */
function unsettled(touched: ReadonlyMap<string, Touched>): Map<string, Touched> {
  const kept = new Map<string, Touched>();
  for (const [id, entry] of touched) {
    if (entry.summary.d.some((d) => d[1] === PENDING || d[1] === FAILED)) kept.set(id, entry);
  }
  return kept;
}
