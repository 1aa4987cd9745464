import { statfsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { StoreRefusal } from "../store";

/** How long a measurement is reused; `admit` runs on every request. */
const REFRESH_MS = 50;

/**
 * Default room kept free for finishing work (done-markers, deletions) and for the journal's
 * move into lmdb at the next open, which needs about the journal's live bytes again (lmdb
 * rounds large values up to whole pages): twice the journal's default byte budget.
 */
export const DEFAULT_RESERVE_BYTES = 128 * 1024 * 1024;

/**
 * The room left for the store's data: on the filesystem (statfs, the blocks an unprivileged
 * writer may use) and inside lmdb's data file, whose freed pages lmdb reuses without the file
 * ever shrinking.
 *
 * New work is refused while both are under the reserve, so the last of the disk goes to what
 * frees room: done-markers, deletions, and at the next open the journal's move into lmdb. With
 * the disk low but room inside the data file, new messages skip the journal and go there.
 */
export class DiskRoom {
  private measuredAt = -Infinity;
  private diskFree = Infinity;
  private fileSlack = 0;

  constructor(
    private readonly dir: string,
    private readonly reserveBytes: number,
    /** Bytes of lmdb pages in use (SizeGauge). */
    private readonly usedBytes: () => number,
  ) {}

  /** Whether the filesystem has less free than the reserve: new messages go to lmdb's free pages, if any. */
  diskLow(now = Date.now()): boolean {
    this.measure(now);
    return this.diskFree < this.reserveBytes;
  }

  /** Whether `bytes` more can be written to the disk with the reserve still free. */
  hasRoomFor(bytes: number, now = Date.now()): boolean {
    this.measure(now);
    return this.diskFree - bytes >= this.reserveBytes;
  }

  /**
   * Whether the event history may write `bytes`: only while a second reserve stays free after
   * them, and never while new work is refused. The history is best-effort and yields the disk to
   * the queues well before their own reserve is reached, so it never takes their capacity.
   */
  historyHasRoomFor(bytes: number, now = Date.now()): boolean {
    if (this.refusal(now) !== undefined) return false;
    return this.hasRoomFor(bytes + this.reserveBytes, now);
  }

  refusal(now = Date.now()): StoreRefusal | undefined {
    if (!this.diskLow(now) || this.fileSlack >= this.reserveBytes) return undefined;
    return {
      code: "store_full",
      message: `less than ${this.reserveBytes} bytes are free on the store's disk: new work waits until finished work frees room`,
      retryAfterSeconds: 10,
    };
  }

  /** Measure again at the next call (after a write that may have freed a lot). */
  invalidate(): void {
    this.measuredAt = -Infinity;
  }

  private measure(now: number): void {
    if (this.reserveBytes <= 0 || now - this.measuredAt < REFRESH_MS) return;
    this.measuredAt = now;
    try {
      const fs = statfsSync(this.dir);
      this.diskFree = fs.bavail * fs.bsize;
      if (this.diskFree >= this.reserveBytes) return;
      // Allocated blocks, not the apparent size: lmdb's file may be sparse.
      const allocated = statSync(join(this.dir, "data.mdb")).blocks * 512;
      this.fileSlack = Math.max(0, allocated - this.usedBytes());
    } catch {
      // The directory is gone or unreadable: the store's other checks report that.
      this.diskFree = Infinity;
    }
  }
}
