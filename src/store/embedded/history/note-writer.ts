import type { RunNote } from "../../history";
import type { SummaryRecord } from "./history-records";
import { RateLimit } from "../../../util/rate-limit";
import type { Logger } from "../../../util/logger";

/**
 * What the batch needs of an event's note besides its record: the note itself (its payload,
 * its raw bytes) is not held until the batch is written, so that it dies young.
 */
export interface EventHead {
  readonly id: string;
  readonly receivedAt: number;
  /** The webhook source's label; "" for an event of a queue. */
  readonly source: string;
  readonly parentId?: string;
  readonly replayOf?: string;
}

/** An event's note with its record made when noted (see EmbeddedHistory.noteEvent), or a run's. */
export type Note =
  | { readonly event: EventHead; readonly record: SummaryRecord; readonly run?: undefined }
  | { readonly run: RunNote; readonly event?: undefined };

export interface NoteWriterOptions {
  /** Longest a note waits before its batch is written (default 1 s): what a crash may lose. */
  readonly intervalMs?: number;
  /** A batch is written at once when this many notes wait (default 10,000), and holds at most this many. */
  readonly batchNotes?: number;
  /**
   * Pause between one batch and the next while notes keep coming (default 50 ms), unless a
   * full batch waits or someone flushes. Written back to back, each batch held only what came
   * during the last commit (a few ms under load): a third of the runs then landed a batch after
   * their event, whose record was written twice, and each commit rewrote the same index pages.
   */
  readonly gapMs?: number;
  /** Notes kept while writing fails (default 100,000); past it the oldest are dropped, and logged. */
  readonly maxPending?: number;
  /**
   * A batch is written at once when the bodies of the notes waiting take this many bytes
   * (default 4 MiB): large webhooks must not wait in memory for the interval.
   */
  readonly batchBytes?: number;
}

/** How often a failed batch is tried before its notes are dropped. */
const ATTEMPTS = 3;

/**
 * Bytes a batch may take on disk, counted generously: lmdb writes changed pages to new ones
 * (copy-on-write) and rounds large values up to whole pages, so twice the encoded size.
 */
export function batchBytes(notes: readonly Note[]): number {
  let bytes = 0;
  for (const note of notes) bytes += note.event ? note.record.b.length + 1_024 : 512;
  return bytes * 2;
}

/**
 * Write-behind for the history's notes. `add` only appends to an array: nothing on the request
 * path or in a run waits for the history. Notes go out in batches, one transaction each, when
 * `batchNotes` wait or `intervalMs` after the first one, one batch at a time. A failed batch is
 * logged (at most one line per 5 seconds) and tried again with the next; nothing is thrown.
 */
export class NoteWriter {
  private pending: Note[] = [];
  /** Attempts already made on the first notes of `pending` (a batch put back after a failure). */
  private failedAttempts = 0;
  private timer: NodeJS.Timeout | undefined;
  private draining: Promise<void> | undefined;
  /** Notes added so far, and notes written or given up on: `flush` waits for the second to reach the first. */
  private added = 0;
  private settled = 0;
  private waiters: { readonly upTo: number; readonly resolve: () => void }[] = [];
  private readonly failureLog = new RateLimit();
  private readonly dropLog = new RateLimit();
  private readonly roomLog = new RateLimit();
  private dropped = 0;
  private skipped = 0;
  private readonly intervalMs: number;
  private readonly batchNotes: number;
  private readonly gapMs: number;
  private readonly maxPending: number;
  private readonly batchBytesLimit: number;
  /** Bytes of the bodies noted since the last batch was taken. */
  private bytesWaiting = 0;

  constructor(
    private readonly write: (notes: readonly Note[]) => Promise<void>,
    private readonly canWrite: () => boolean,
    private readonly logger: Logger,
    options: NoteWriterOptions = {},
    /** Whether the disk has room for `bytes` more of history (see DiskRoom.historyHasRoomFor). */
    private readonly hasRoom: (bytes: number) => boolean = () => true,
  ) {
    this.intervalMs = options.intervalMs ?? 1_000;
    this.batchNotes = options.batchNotes ?? 10_000;
    this.gapMs = Math.min(options.gapMs ?? 50, this.intervalMs);
    this.maxPending = options.maxPending ?? 100_000;
    this.batchBytesLimit = options.batchBytes ?? 4 * 1024 * 1024;
  }

  add(note: Note): void {
    this.added++;
    if (this.pending.length >= this.maxPending) this.drop(1);
    this.pending.push(note);
    if (note.event) this.bytesWaiting += note.record.b.length;
    this.schedule();
  }

  /** Resolves once every note added before the call was written (or given up on after failures). */
  flush(): Promise<void> {
    if (this.settled >= this.added) return Promise.resolve();
    const upTo = this.added;
    // Held until written: lmdb's pending commit does not keep Node's event loop alive, and a
    // process with nothing else to do (a script, the CLI) would end with the batch unwritten.
    const alive = setInterval(() => undefined, 60_000);
    const done = new Promise<void>((resolve) => this.waiters.push({ upTo, resolve })).finally(() => clearInterval(alive));
    this.clearTimer();
    void this.drain();
    return done;
  }

  /** Stops the timer; pending notes stay for a later `flush` (the store reopened). */
  stop(): void {
    this.clearTimer();
  }

  /** Writes now when a full batch waits; otherwise within `delayMs` (the interval from a first note, the gap after a batch). */
  private schedule(delayMs = this.intervalMs): void {
    if (this.draining) return; // the drain loop takes what comes in meanwhile, or schedules it
    if (this.full()) {
      this.clearTimer();
      void this.drain();
      return;
    }
    if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.drain();
      }, delayMs);
      this.timer.unref();
    }
  }

  private full(): boolean {
    return this.pending.length >= this.batchNotes || this.bytesWaiting >= this.batchBytesLimit;
  }

  private drain(): Promise<void> {
    this.draining ??= this.drainLoop().then(
      (failed) => this.drained(failed),
      () => this.drained(true),
    );
    return this.draining;
  }

  /** After a failed batch, the next try waits the interval; otherwise what waits goes after the gap. */
  private drained(failed: boolean): void {
    this.draining = undefined;
    if (this.pending.length > 0 && this.canWrite()) this.schedule(failed ? this.intervalMs : this.gapMs);
  }

  /** Writes batches while there are full ones (or a flush waits); true when one failed. */
  private async drainLoop(): Promise<boolean> {
    while (this.pending.length > 0) {
      if (!this.canWrite()) {
        // The store is closed: the notes wait for it to open again; flush() does not hang on them.
        this.settleWaiters(this.added);
        return false;
      }
      const batch = this.pending.splice(0, this.batchNotes);
      this.bytesWaiting = 0;
      if (!this.hasRoom(batchBytes(batch))) {
        // The disk is nearly full: the queues' room comes first (a batch put back after a
        // failure too). Writing resumes with the first batch that fits once work frees room.
        this.failedAttempts = 0;
        this.skip(batch);
        continue;
      }
      try {
        await this.write(batch);
        this.failedAttempts = 0;
        this.settle(batch.length);
      } catch (error) {
        this.failed(batch, error);
        return true;
      }
      // What came during the write waits for the gap, unless it fills a batch or is flushed.
      if (!this.full() && !this.waiters.some((w) => w.upTo > this.settled)) return false;
    }
    return false;
  }

  private failed(batch: Note[], error: unknown): void {
    const attempts = ++this.failedAttempts;
    const pass = this.failureLog.pass();
    if (pass) {
      this.logger.error(
        { err: error, notes: batch.length, attempt: attempts, suppressed: pass.suppressed },
        attempts >= ATTEMPTS ? "the event history could not write a batch of notes and drops it; the queues are not affected" : "the event history could not write a batch of notes; trying again",
      );
    }
    if (attempts >= ATTEMPTS) {
      this.failedAttempts = 0;
      this.dropped += batch.length;
      this.settle(batch.length);
      return;
    }
    // Put back in front, and counted as settled for flush(): it was tried.
    this.pending.unshift(...batch);
    this.settleWaiters(this.added);
  }

  private skip(batch: Note[]): void {
    this.dropped += batch.length;
    this.skipped += batch.length;
    this.settle(batch.length);
    const pass = this.roomLog.pass();
    if (pass) {
      this.logger.error(
        { notes: batch.length, droppedForRoom: this.skipped, suppressed: pass.suppressed },
        "the disk is nearly full: the event history drops notes so that the queues keep their room; it writes again once room is freed",
      );
    }
  }

  /** Notes dropped because the disk was nearly full (see `skip`). */
  get droppedForRoom(): number {
    return this.skipped;
  }

  private drop(count: number): void {
    this.pending.splice(0, count);
    this.dropped += count;
    this.settle(count);
    const pass = this.dropLog.pass();
    if (pass) this.logger.error({ dropped: this.dropped, maxPending: this.maxPending }, "the event history is not being written and holds too many notes: the oldest are dropped");
  }

  private settle(count: number): void {
    this.settled += count;
    this.settleWaiters(this.settled);
  }

  private settleWaiters(upTo: number): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.upTo <= upTo);
    this.waiters = this.waiters.filter((w) => w.upTo > upTo);
    for (const w of ready) w.resolve();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
