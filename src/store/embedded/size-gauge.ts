import type { Database } from "lmdb";

/** How long a measurement is reused; `admit` runs on every request. */
const REFRESH_MS = 20;

interface TreeStats {
  pageSize: number;
  treeBranchPageCount: number;
  treeLeafPageCount: number;
  overflowPages: number;
}

/**
 * Bytes the store's data occupies: the pages of its B-trees. The file itself never shrinks
 * (LMDB reuses freed pages instead), so counting pages in use is what lets the store accept
 * work again once messages are consumed.
 */
export class SizeGauge {
  private bytes = 0;
  private measuredAt = -Infinity;

  constructor(private readonly databases: () => readonly Database[]) {}

  current(now = Date.now()): number {
    if (now - this.measuredAt >= REFRESH_MS) {
      this.bytes = measure(this.databases());
      this.measuredAt = now;
    }
    return this.bytes;
  }

  /** Forces the next call to measure again (after a write that may have freed a lot). */
  invalidate(): void {
    this.measuredAt = -Infinity;
  }
}

function measure(databases: readonly Database[]): number {
  let bytes = 0;
  for (const db of databases) {
    const stats = db.getStats() as Partial<TreeStats>;
    const pages = (stats.treeBranchPageCount ?? 0) + (stats.treeLeafPageCount ?? 0) + (stats.overflowPages ?? 0);
    bytes += pages * (stats.pageSize ?? 4096);
  }
  return bytes;
}
