import { closeSync, constants, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, unlink, write, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { syncDirectory } from "./sync-directory";
import { StoreRefusedError, toRefusal } from "../../store-errors";
import { DataDirLostError } from "../data-dir-guard";
import { encodeFrame, FRAME_HEADER_BYTES, MAX_FRAME_BYTES, newSegmentHeader, SEGMENT_HEADER_BYTES, type SegmentHeader } from "./journal-format";

export interface JournalLogOptions {
  /** Directory of the segment files (created when missing). */
  readonly dir: string;
  /** Names this opening's segments: `<epoch>-<index>.wal` (lower-case hex). */
  readonly epoch: string;
  /** A segment is closed and a new one begun once it holds this many bytes. */
  readonly segmentBytes: number;
  /** Called when a write or sync fails (the store then refuses work until a write succeeds). */
  readonly onFailure: (error: unknown) => void;
  /** Called after each successful durable write. */
  readonly onSuccess: () => void;
}

interface Waiter {
  readonly resolve: (segment: number) => void;
  readonly reject: (error: unknown) => void;
}

interface OpenSegment {
  readonly index: number;
  readonly fd: number;
  readonly header: SegmentHeader;
  /** Where the next frame goes (frames in flight included). */
  size: number;
  frames: number;
}

/** A frame on its way to disk. */
interface Frame {
  readonly segment: OpenSegment;
  readonly at: number;
  readonly waiters: Waiter[];
  readonly durable: boolean;
  /** Entries the frame adds to its segment (counted live from the moment it is written). */
  readonly entries: number;
  state: "writing" | "written" | "failed";
  error?: unknown;
}

/**
 * Frames written at once. One frame syncing while the next is written keeps the disk busy
 * without waiting for each sync in turn; more would only cut batches smaller (each write
 * is a sync, and costs CPU time).
 */
const MAX_IN_FLIGHT = 2;

/** Done-markers wait this long for a frame that must be written anyway before getting their own. */
const LAZY_WRITE_MS = 50;

const ignore = (): void => undefined;

/**
 * The journal's files: an append-only log cut into segments, written by group commit. The
 * segment files are opened O_DSYNC, so a write returns once its bytes are on disk. Every
 * operation appended during one event-loop turn (and while earlier frames are on their way)
 * goes out as one frame in one write; the callers' promises resolve after it, in order. Under
 * load, dozens of requests share one synced write instead of paying one each.
 *
 * It also counts the live entries of each segment, and deletes segments oldest first: a
 * segment goes once it and every older one hold no live entry and it is not the one being
 * written. In that order a done-marker, which may sit in a later segment than its entry, is
 * never deleted before the entry it cancels.
 */
export class JournalLog {
  /** Called when a new segment is begun, with its index (the lane moves old entries forward then). */
  onRotated: ((index: number) => void) | undefined;

  private current: OpenSegment | undefined;
  private nextIndex = 0;
  /** Lowest segment index not deleted yet. */
  private lowest = 0;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  private queuedEntries = 0;
  private waiters: Waiter[] = [];
  /** Whether something queued must reach the disk before anyone is told (not just done-markers). */
  private queuedDurable = false;
  private inFlight: Frame[] = [];
  /** A frame failed: no new frame until those in flight are settled and a new segment begins. */
  private broken: { readonly segment: OpenSegment; readonly at: number } | undefined;
  private scheduled = false;
  private lazyTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private idle: Array<() => void> = [];
  private readonly live = new Map<number, number>();
  /** Segments that never held a frame with a payload (only the probe's empty frames): they may go in any order. */
  private readonly emptyOnly = new Set<number>();

  constructor(private readonly options: JournalLogOptions) {
    if (!existsSync(options.dir)) {
      mkdirSync(options.dir, { recursive: true });
      // The new directory's name must survive a crash too, or its segments go with it.
      syncDirectory(dirname(options.dir));
    }
  }

  /**
   * Appends operations that must be on disk before the caller goes on; resolves with the
   * index of the segment they landed in. `entries` is how many enqueue operations they hold:
   * those count as live in that segment from the moment the frame is written, until released.
   * An append of nothing still writes a (header-only) frame: a probe of the disk.
   */
  append(parts: readonly Buffer[], entries = 0): Promise<number> {
    if (this.closed) return Promise.reject(new StoreRefusedError({ code: "store_unavailable", message: "the store is closed", retryAfterSeconds: 5 }));
    return new Promise<number>((resolve, reject) => {
      this.push(parts);
      this.queuedEntries += entries;
      this.queuedDurable = true;
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /**
   * Appends operations nobody waits for (done-markers): they ride with the next frame, or get
   * one of their own a little later. Losing them in a crash only means their messages are
   * delivered again.
   */
  appendLazily(parts: readonly Buffer[]): void {
    if (this.closed) return;
    this.push(parts);
    if (this.lazyTimer || this.scheduled) return;
    this.lazyTimer = setTimeout(() => {
      this.lazyTimer = undefined;
      this.dispatch();
    }, LAZY_WRITE_MS);
    this.lazyTimer.unref();
  }

  /** An entry of `segment` is done; segments with nothing live left go, oldest first. */
  release(segment: number): void {
    this.uncount(segment, 1);
    this.sweep();
  }

  /** Writes what is queued and closes the current segment. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.dispatch();
    if (this.busy()) await new Promise<void>((resolve) => this.idle.push(resolve));
    const segment = this.current;
    this.current = undefined;
    if (segment) closeQuietly(segment.fd);
  }

  private busy(): boolean {
    return this.inFlight.length > 0 || this.queued.length > 0 || this.waiters.length > 0;
  }

  private push(parts: readonly Buffer[]): void {
    for (const part of parts) {
      this.queued.push(part);
      this.queuedBytes += part.length;
    }
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate: every request of this event-loop turn joins the frame.
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  /** Starts writing what is queued, if a frame may start now. */
  private dispatch(): void {
    if ((this.queued.length === 0 && this.waiters.length === 0) || this.broken || this.inFlight.length >= MAX_IN_FLIGHT) return;
    if (this.lazyTimer) clearTimeout(this.lazyTimer);
    this.lazyTimer = undefined;
    const bytes = this.queuedBytes;
    let segment = this.current;
    if (!segment || (segment.size + FRAME_HEADER_BYTES + bytes > this.options.segmentBytes && segment.frames > 0)) {
      // The old segment's frames land first; then the new one is begun.
      if (this.inFlight.length > 0) return;
      try {
        segment = this.rotate();
      } catch (error) {
        return this.fail(this.take(), error);
      }
    }
    const batch = this.take();
    if (batch.bytes > MAX_FRAME_BYTES) {
      return this.fail(batch, new RangeError(`a journal frame of ${batch.bytes} bytes is over the ${MAX_FRAME_BYTES}-byte limit`));
    }
    if (batch.bytes > 0) this.emptyOnly.delete(segment.index);
    const bytesOut = encodeFrame(segment.header, segment.frames, batch.parts, batch.bytes);
    const expected = bytesOut.length;
    const frame: Frame = { segment, at: segment.size, waiters: batch.waiters, durable: batch.durable, entries: batch.entries, state: "writing" };
    segment.size += expected;
    segment.frames++;
    // Live from now: nothing may delete this segment while its frame is on its way.
    if (frame.entries > 0) this.live.set(segment.index, (this.live.get(segment.index) ?? 0) + frame.entries);
    this.inFlight.push(frame);
    write(segment.fd, bytesOut, 0, expected, frame.at, (error, written) => {
      if (!error && written !== expected) error = new Error(`short write to the journal: ${written} of ${expected} bytes`);
      // A write into a deleted file succeeds and is lost with the process: never acknowledged.
      if (!error) error = this.deleted(segment) ?? null;
      frame.state = error ? "failed" : "written";
      frame.error = error ?? undefined;
      this.settle();
    });
  }

  private deleted(segment: OpenSegment): NodeJS.ErrnoException | undefined {
    try {
      if (fstatSync(segment.fd).nlink > 0) return undefined;
    } catch (error) {
      return error as NodeJS.ErrnoException;
    }
    return new DataDirLostError(this.options.dir, `its journal segment ${this.pathOf(segment.index)} was deleted`);
  }

  private take(): { parts: Buffer[]; bytes: number; waiters: Waiter[]; durable: boolean; entries: number } {
    const batch = { parts: this.queued, bytes: this.queuedBytes, waiters: this.waiters, durable: this.queuedDurable, entries: this.queuedEntries };
    this.queued = [];
    this.queuedBytes = 0;
    this.queuedEntries = 0;
    this.waiters = [];
    this.queuedDurable = false;
    return batch;
  }

  /** Tells the callers of written frames, in order; after a failure, every later frame fails too. */
  private settle(): void {
    while (this.inFlight.length > 0 && this.inFlight[0]!.state !== "writing") {
      const frame = this.inFlight.shift()!;
      if (frame.state === "failed" && !this.broken) this.broken = { segment: frame.segment, at: frame.at };
      if (this.broken) {
        // Recovery stops at the first bad frame: what follows it would not be read back.
        if (frame.entries > 0) this.uncount(frame.segment.index, frame.entries);
        this.fail({ waiters: frame.waiters }, frame.error ?? new Error("an earlier journal write failed"));
        continue;
      }
      if (frame.durable) this.options.onSuccess();
      for (const waiter of frame.waiters) waiter.resolve(frame.segment.index);
    }
    // The file is let go only once nothing is writing to it (its descriptor could be reused).
    if (this.inFlight.length === 0 && this.broken) this.abandonSegment(this.broken);
    this.dispatch();
    if (!this.busy()) for (const done of this.idle.splice(0)) done();
  }

  private uncount(segment: number, count: number): void {
    const left = (this.live.get(segment) ?? 0) - count;
    if (left > 0) this.live.set(segment, left);
    else this.live.delete(segment);
  }

  private fail(batch: { waiters: Waiter[] }, error: unknown): void {
    this.options.onFailure(error);
    const refused = new StoreRefusedError(toRefusal(error), { cause: error });
    for (const waiter of batch.waiters) waiter.reject(refused);
  }

  /**
   * After a failed write: what reached the file may be half a frame. Cut it off (best effort)
   * and begin a new segment, so nothing is ever written after a bad frame.
   */
  private abandonSegment(broken: { readonly segment: OpenSegment; readonly at: number }): void {
    this.broken = undefined;
    const { segment } = broken;
    try {
      ftruncateSync(segment.fd, broken.at);
    } catch {
      // the next open stops reading at the bad frame anyway
    }
    closeQuietly(segment.fd);
    if (this.current === segment) this.current = undefined;
    // Not one good frame in it (a full disk, retried every second): it goes now, or each
    // retry would leave one more file behind the oldest segment still in use.
    if (broken.at <= SEGMENT_HEADER_BYTES) unlink(this.pathOf(segment.index), ignore);
    this.sweep();
  }

  /**
   * Closes the current segment and begins the next: created O_DSYNC, its header written, and
   * its name synced into the directory. Synchronous, once per segment (64 MiB by default).
   */
  private rotate(): OpenSegment {
    const previous = this.current;
    this.current = undefined;
    if (previous) closeQuietly(previous.fd);
    const index = this.nextIndex++;
    const fd = openSync(this.pathOf(index), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_DSYNC);
    try {
      const { bytes, header } = newSegmentHeader();
      writeSync(fd, bytes, 0, bytes.length, 0);
      syncDirectory(this.options.dir);
      const segment: OpenSegment = { index, fd, header, size: bytes.length, frames: 0 };
      this.current = segment;
      this.emptyOnly.add(index);
      this.sweep();
      // Not from in here: what it appends must not join the frame being dispatched.
      const rotated = this.onRotated;
      if (rotated) queueMicrotask(() => rotated(index));
      return segment;
    } catch (error) {
      closeQuietly(fd);
      unlink(this.pathOf(index), ignore);
      throw error;
    }
  }

  /** Deletes segments from the oldest on, while they hold nothing live and are not being written. */
  private sweep(): void {
    const writing = this.current?.index ?? this.nextIndex;
    // Nothing in these can cancel an older entry: no need to wait for the older segments to go.
    for (const index of this.emptyOnly) {
      if (index >= writing || this.live.has(index)) continue;
      this.emptyOnly.delete(index);
      unlink(this.pathOf(index), ignore);
    }
    while (this.lowest < writing && !this.live.has(this.lowest)) {
      // A segment that survives a crash undeleted is read again at the next open: its messages
      // without a done-marker are delivered again, which at-least-once allows.
      unlink(this.pathOf(this.lowest), ignore);
      this.lowest++;
    }
  }

  private pathOf(index: number): string {
    return join(this.options.dir, segmentFileName(this.options.epoch, index));
  }
}

/** `<epoch>-<index>.wal`, the index zero-padded so that names sort in write order. */
export function segmentFileName(epoch: string, index: number): string {
  return `${epoch}-${String(index).padStart(8, "0")}.wal`;
}

/** A segment file name: epoch (hex) and index. */
export const SEGMENT_FILE = /^([0-9a-f]+)-(\d{8})\.wal$/;

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed, or the disk is gone: nothing left to do with it
  }
}
