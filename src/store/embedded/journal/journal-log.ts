import { mkdirSync } from "node:fs";
import { open, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { StoreRefusedError, toRefusal } from "../../store-errors";
import { frameHeader, MAX_FRAME_BYTES, newSegmentHeader, type SegmentHeader } from "./journal-format";

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
  readonly path: string;
  readonly handle: FileHandle;
  readonly header: SegmentHeader;
  size: number;
  frames: number;
}

const ignore = (): void => undefined;

/**
 * The journal's files: an append-only log cut into segments, written by group commit. Every
 * operation appended during one event-loop turn (and while the previous write is on its way
 * to disk) goes out as one frame in one writev, then one fdatasync; the callers' promises
 * resolve after that. Under load, fifty requests share a sync instead of paying one each.
 *
 * It also knows which segments still hold live entries: a segment is deleted as soon as it is
 * no longer the one being written and every entry in it is done.
 */
export class JournalLog {
  private current: OpenSegment | undefined;
  private nextIndex = 0;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  private waiters: Waiter[] = [];
  /** Whether something queued must reach the disk before anyone is told (not just done-markers). */
  private queuedDurable = false;
  private writing = false;
  private scheduled = false;
  private closed = false;
  private idle: Array<() => void> = [];
  private readonly live = new Map<number, number>();

  constructor(private readonly options: JournalLogOptions) {
    mkdirSync(options.dir, { recursive: true });
  }

  /** Index of the segment being written (where the next frame goes, unless it rotates). */
  get currentIndex(): number {
    return this.current?.index ?? this.nextIndex;
  }

  /**
   * Appends operations that must be on disk before the caller goes on; resolves with the
   * index of the segment they landed in.
   */
  append(parts: readonly Buffer[]): Promise<number> {
    if (this.closed) return Promise.reject(new StoreRefusedError({ code: "store_unavailable", message: "the store is closed", retryAfterSeconds: 5 }));
    return new Promise<number>((resolve, reject) => {
      this.push(parts);
      this.queuedDurable = true;
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /**
   * Appends operations nobody waits for (done-markers): they ride with the next frame. Losing
   * them in a crash only means their messages are delivered again.
   */
  appendLazily(parts: readonly Buffer[]): void {
    if (this.closed) return;
    this.push(parts);
    this.schedule();
  }

  /** An entry was committed to `segment`. */
  retain(segment: number): void {
    this.live.set(segment, (this.live.get(segment) ?? 0) + 1);
  }

  /** An entry of `segment` is done; the segment goes once none is left and it is not current. */
  release(segment: number): void {
    const left = (this.live.get(segment) ?? 0) - 1;
    if (left > 0) return void this.live.set(segment, left);
    this.live.delete(segment);
    if (segment !== this.current?.index) this.remove(segment);
  }

  /** Writes what is queued and closes the current segment. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.writing || this.scheduled) await new Promise<void>((resolve) => this.idle.push(resolve));
    if (this.queued.length > 0) await this.flush();
    const segment = this.current;
    this.current = undefined;
    await segment?.handle.close().catch(ignore);
  }

  private push(parts: readonly Buffer[]): void {
    for (const part of parts) {
      this.queued.push(part);
      this.queuedBytes += part.length;
    }
  }

  private schedule(): void {
    if (this.writing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate: every request of this event-loop turn joins the frame.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.writing) return;
    if (this.queued.length === 0) return this.settle();
    this.writing = true;
    const parts = this.queued;
    const bytes = this.queuedBytes;
    const waiters = this.waiters;
    const durable = this.queuedDurable;
    this.queued = [];
    this.queuedBytes = 0;
    this.waiters = [];
    this.queuedDurable = false;
    try {
      if (bytes > MAX_FRAME_BYTES) throw new RangeError(`a journal frame of ${bytes} bytes is over the ${MAX_FRAME_BYTES}-byte limit`);
      const index = await this.write(parts, bytes, durable);
      if (durable) this.options.onSuccess();
      for (const waiter of waiters) waiter.resolve(index);
    } catch (error) {
      this.options.onFailure(error);
      const refused = new StoreRefusedError(toRefusal(error), { cause: error });
      for (const waiter of waiters) waiter.reject(refused);
    } finally {
      this.writing = false;
    }
    if (this.queued.length > 0) this.schedule();
    else this.settle();
  }

  private settle(): void {
    if (this.writing || this.scheduled) return;
    for (const done of this.idle.splice(0)) done();
  }

  /** One frame: rotate if the segment is full, writev, fdatasync. Returns the segment index. */
  private async write(parts: Buffer[], bytes: number, durable: boolean): Promise<number> {
    let segment = this.current;
    let fresh: Buffer | undefined;
    if (!segment || (segment.size + bytes > this.options.segmentBytes && segment.frames > 0)) {
      ({ segment, fresh } = await this.rotate());
    }
    const head = frameHeader(segment.header, segment.frames, parts, bytes);
    const out = fresh ? [fresh, head, ...parts] : [head, ...parts];
    const expected = (fresh?.length ?? 0) + head.length + bytes;
    const at = fresh ? 0 : segment.size;
    try {
      const { bytesWritten } = await segment.handle.writev(out, at);
      if (bytesWritten !== expected) throw new Error(`short write to the journal: ${bytesWritten} of ${expected} bytes`);
      // A new segment's header is synced with its first frame, and its name with the directory.
      if (durable || fresh) await segment.handle.datasync();
      if (fresh) await syncDirectory(this.options.dir);
    } catch (error) {
      // What reached the file may be half a frame: cut it off (best effort) and start a new
      // segment next time, so nothing is ever written after a bad frame.
      this.current = undefined;
      await segment.handle.truncate(at).catch(ignore);
      await segment.handle.close().catch(ignore);
      if (!this.live.has(segment.index)) this.remove(segment.index);
      throw error;
    }
    segment.size = at + expected;
    segment.frames++;
    return segment.index;
  }

  private async rotate(): Promise<{ segment: OpenSegment; fresh: Buffer }> {
    const previous = this.current;
    this.current = undefined;
    if (previous) {
      await previous.handle.close().catch(ignore);
      if (!this.live.has(previous.index)) this.remove(previous.index);
    }
    const index = this.nextIndex++;
    const path = this.pathOf(index);
    const handle = await open(path, "w");
    const { bytes, header } = newSegmentHeader();
    const segment: OpenSegment = { index, path, handle, header, size: 0, frames: 0 };
    this.current = segment;
    return { segment, fresh: bytes };
  }

  private remove(index: number): void {
    // A segment that survives a crash undeleted is read again at the next open: its messages
    // without a done-marker are delivered again, which at-least-once allows.
    unlink(this.pathOf(index)).catch(ignore);
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

async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
