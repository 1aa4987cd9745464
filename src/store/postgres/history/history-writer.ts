import { serverCode } from "../postgres-errors";
import type { ThrottledLog } from "../throttled-log";
import type { Logger } from "../../../util/logger";
import type { NoteRows } from "./note-rows";

export interface HistoryWriterOptions {
  /**
   * Writes one batch in one statement. `repeat`: rows of it may be in the database already (an
   * earlier try may have committed), skip them instead of failing.
   */
  readonly write: (batch: readonly NoteRows[], repeat: boolean) => Promise<void>;
  readonly log: ThrottledLog;
  readonly logger: Logger | undefined;
  /** How long a note may wait for others to share its statement (default 100 ms). */
  readonly delayMs?: number;
  /** Most notes in one statement (default 1,000). */
  readonly maxBatchNotes?: number;
  /** Most characters of encoded values in one statement (default 8 MB). */
  readonly maxBatchChars?: number;
  /** Most notes waiting; past it new notes are dropped and counted (default 50,000). */
  readonly maxBuffered?: number;
  /** Most characters of encoded values waiting, the same way (default 64 MB: large bodies fill it before the count). */
  readonly maxBufferedChars?: number;
  /** Tries of one batch while the database fails, before it is dropped (default 5, about 15 s). */
  readonly tries?: number;
  /** First pause between tries, doubled each time up to 8 s (default 500 ms). */
  readonly retryMs?: number;
  /**
   * True while the store knows its database cannot be reached (it probes with its own backoff):
   * the writer's tries then fail without a statement, so that it adds no logins or connections
   * to a database that refuses them.
   */
  readonly blocked?: () => boolean;
}

interface Buffered {
  readonly seq: number;
  readonly rows: NoteRows;
}

const LOST_LOG_MS = 5_000;
const UNIQUE_VIOLATION = "23505";

/**
 * The history's background writer. A note, already encoded (its rows are the note as it was
 * when made, whatever happens to its objects later), is queued in memory and returns at
 * once; every `delayMs` (or as soon as a batch is full) the queued notes are written by one
 * statement, one batch at a time.
 *
 * When the database fails, the batch is tried again after a growing pause, `tries` times, then
 * dropped with every note queued behind it (a statement that ran out of time, or lost to a
 * lock, is tried the same way); notes keep queuing meanwhile up to `maxBuffered`, past which
 * new ones are dropped.
 * Drops are counted (`lost`) and logged, at most a line every 5 s. A statement the server
 * refuses for its content is split: each note alone, dropping only the one refused. The queues
 * never wait for any of this: the writer has its own statements and never marks the store failing.
 */
export class HistoryWriter {
  private buffer: Buffered[] = [];
  private bufferedChars = 0;
  private seq = 0;
  private settledSeq = 0;
  private waiters: Array<{ readonly seq: number; readonly resolve: () => void }> = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private sleeping: { readonly timer: NodeJS.Timeout; readonly wake: () => void } | undefined;
  private closing = false;
  private lostUnlogged = 0;
  private lastLostLog = 0;
  /** Drops made within 5 s of the last line: logged when the 5 s are up, never left unsaid. */
  private lostTimer: NodeJS.Timeout | undefined;
  private lostWhy: { readonly error: unknown; readonly message: string } | undefined;
  /** Notes dropped so far (database down past the tries, buffer full, or refused). */
  lost = 0;
  /** Statements written so far. */
  batches = 0;

  private readonly delayMs: number;
  private readonly maxBatchNotes: number;
  private readonly maxBatchChars: number;
  private readonly maxBuffered: number;
  private readonly maxBufferedChars: number;
  private readonly tries: number;
  private readonly retryMs: number;

  constructor(private readonly options: HistoryWriterOptions) {
    this.delayMs = options.delayMs ?? 100;
    this.maxBatchNotes = options.maxBatchNotes ?? 1_000;
    this.maxBatchChars = options.maxBatchChars ?? 8 * 1024 * 1024;
    this.maxBuffered = options.maxBuffered ?? 50_000;
    this.maxBufferedChars = options.maxBufferedChars ?? 64 * 1024 * 1024;
    this.tries = options.tries ?? 5;
    this.retryMs = options.retryMs ?? 500;
  }

  /** Notes waiting to be written. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Queues an encoded note. Never throws. */
  add(rows: NoteRows): void {
    if (this.buffer.length >= this.maxBuffered || this.bufferedChars + rows.size > this.maxBufferedChars) {
      this.dropped(1, undefined, "the history's write buffer is full (the database is slow or down); notes dropped");
      return;
    }
    this.buffer.push({ seq: ++this.seq, rows });
    this.bufferedChars += rows.size;
    if (this.buffer.length >= this.maxBatchNotes) this.start();
    else this.schedule();
  }

  /** A note that could not be encoded (a cyclic payload): counted and logged as lost. */
  unencodable(error: unknown): void {
    this.dropped(1, error, "a history note could not be encoded; dropped");
  }

  /** Resolves once every note queued before the call is written or dropped. */
  flush(): Promise<void> {
    const target = this.seq;
    if (this.settledSeq >= target) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.push({ seq: target, resolve });
      this.start();
    });
  }

  /** Stops the tries: what is queued gets one try now, then anything left is dropped. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.sleeping?.wake();
    await this.writing;
    if (this.buffer.length > 0) this.start();
    await this.writing;
    if (this.lostTimer) this.logLost();
    this.closing = false;
  }

  private schedule(): void {
    if (this.timer || this.writing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, this.delayMs);
    this.timer.unref();
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing) return;
    this.writing = this.drain().finally(() => {
      this.writing = undefined;
      // Notes that came while the last batch was written wait for the next round.
      if (this.buffer.length > 0 && !this.closing) this.schedule();
    });
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const { batch, lastSeq } = this.take();
      await this.writeBatch(batch);
      this.settle(lastSeq);
      const wanted = this.waiters.length > 0 || this.closing || this.buffer.length >= this.maxBatchNotes;
      if (!wanted) return;
    }
  }

  /** The next batch off the front of the buffer, and the last note it settles. */
  private take(): { batch: NoteRows[]; lastSeq: number } {
    const batch: NoteRows[] = [];
    let chars = 0;
    let n = 0;
    while (n < this.buffer.length && batch.length < this.maxBatchNotes) {
      const { rows } = this.buffer[n];
      if (batch.length > 0 && chars + rows.size > this.maxBatchChars) break;
      chars += rows.size;
      batch.push(rows);
      n++;
    }
    const lastSeq = this.buffer[n - 1].seq;
    this.buffer.splice(0, n);
    this.bufferedChars -= chars;
    return { batch, lastSeq };
  }

  private async writeBatch(batch: readonly NoteRows[]): Promise<void> {
    if (batch.length === 0) return;
    const tries = this.closing ? 1 : this.tries;
    let pause = this.retryMs;
    // A first try writes plainly (cheaper); once a try failed, its commit may have happened
    // all the same (its reply lost), and later tries skip the rows already there.
    let repeat = false;
    for (let attempt = 1; ; attempt++) {
      try {
        // A try that would only add a login to a database refusing them counts as failed.
        if (!this.closing && this.options.blocked?.() === true) throw new Error("the store cannot reach its database");
        await this.send(batch, repeat);
        this.options.log.recovered("history", "history notes are written again");
        return;
      } catch (error) {
        if (!repeat && serverCode(error) === UNIQUE_VIOLATION) {
          // A row of the batch is there already: not a failure, the same batch skipping it.
          repeat = true;
          attempt--;
          continue;
        }
        repeat = true;
        if (refusesContent(error)) return this.writeOneByOne(batch, error);
        if (attempt >= tries || this.closing) {
          // What is queued behind it would meet the same database: dropped too, so that a
          // flush (or a stop) waits for one batch's tries, not for each batch's in turn.
          const behind = this.buffer.length;
          if (behind > 0) this.settle(this.buffer[behind - 1].seq);
          this.buffer = [];
          this.bufferedChars = 0;
          this.dropped(batch.length + behind, error, "history notes could not be written (the database fails); dropped");
          return;
        }
        this.options.log.failed("history", error, "cannot write history notes; trying again");
        await this.sleep(pause);
        pause = Math.min(pause * 2, 8_000);
      }
    }
  }

  /** The server refused the batch for what it holds: each note alone, so that one bad note loses only itself. */
  private async writeOneByOne(batch: readonly NoteRows[], first: unknown): Promise<void> {
    if (batch.length === 1) {
      this.dropped(1, first, "the database refused a history note; dropped");
      return;
    }
    for (const rows of batch) {
      try {
        await this.send([rows], true);
      } catch (error) {
        this.dropped(1, error, "the database refused a history note; dropped");
      }
    }
  }

  private async send(rows: readonly NoteRows[], repeat: boolean): Promise<void> {
    this.batches++;
    await this.options.write(rows, repeat);
  }

  private settle(seq: number): void {
    this.settledSeq = Math.max(this.settledSeq, seq);
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters) {
      if (waiter.seq <= this.settledSeq) waiter.resolve();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  private dropped(n: number, error: unknown, message: string): void {
    this.lost += n;
    this.lostUnlogged += n;
    this.lostWhy = { error, message };
    const wait = this.lastLostLog + LOST_LOG_MS - Date.now();
    if (wait <= 0) return this.logLost();
    this.lostTimer ??= setTimeout(() => this.logLost(), wait);
    this.lostTimer.unref();
  }

  private logLost(): void {
    if (this.lostTimer) clearTimeout(this.lostTimer);
    this.lostTimer = undefined;
    if (this.lostUnlogged === 0 || this.lostWhy === undefined) return;
    const { error, message } = this.lostWhy;
    this.lastLostLog = Date.now();
    const fields: Record<string, unknown> = { store: "postgres", kind: "history", lost: this.lostUnlogged, lostSoFar: this.lost };
    if (error !== undefined) fields.error = error instanceof Error ? error.message : String(error);
    this.lostUnlogged = 0;
    this.options.logger?.error(fields, message);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeping = undefined;
        resolve();
      }, ms);
      timer.unref();
      this.sleeping = {
        timer,
        wake: () => {
          clearTimeout(timer);
          this.sleeping = undefined;
          resolve();
        },
      };
    });
  }
}

/** The server refused the statement for the data it carries (22 data exception, 23 a constraint, 54 a limit): trying it again would fail again. */
function refusesContent(error: unknown): boolean {
  const code = serverCode(error);
  return code !== undefined && ["22", "23", "54"].includes(code.slice(0, 2));
}
