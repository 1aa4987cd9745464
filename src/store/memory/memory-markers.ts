import { Fifo } from "../fifo";
import type { Logger } from "../../util/logger";
import { RateLimit } from "../../util/rate-limit";
import type { StateEntry } from "./memory-state";

/**
 * Deduplication markers the memory store keeps at most unless told otherwise: a few hundred
 * bytes each in the heap, under 50 MiB in all. A steady sender would otherwise grow the heap
 * for as long as its markers live (72 hours by default) and end the process, with everything
 * in it.
 */
export const DEFAULT_MEMORY_DEDUPE_MARKERS = 100_000;

/** At most one warning per this long, however many markers go. */
const WARN_EVERY_MS = 60_000;

/**
 * Bounds the count of the memory store's deduplication markers: past the bound the oldest
 * (first written) go. Told of each entry as it is added; all its work is O(1) amortised.
 */
export class MarkerBound {
  /** Entries in the order they were added, with the entry object: one deleted and added again is a new one, and the old place is skipped. */
  private order = new Fifo<{ readonly key: string; readonly entry: StateEntry }>();
  /** Live markers dropped since the last warning. */
  private dropped = 0;
  private readonly warnings = new RateLimit(WARN_EVERY_MS);

  constructor(
    private readonly entries: Map<string, StateEntry>,
    readonly max: number,
    private readonly logger: Logger,
  ) {}

  added(key: string, entry: StateEntry): void {
    this.order.push({ key, entry });
    if (this.entries.size > this.max) this.evict();
    // Places of entries deleted (expired, forgotten) stay until they reach the front: dropped now and then.
    else if (this.order.length > 2 * this.entries.size + 1024) this.compact();
  }

  private evict(): void {
    const now = Date.now();
    while (this.entries.size > this.max) {
      const oldest = this.order.shift();
      if (oldest === undefined) return;
      if (this.entries.get(oldest.key) !== oldest.entry) continue;
      this.entries.delete(oldest.key);
      // An expired marker not swept yet forgets nothing.
      if (oldest.entry.expiresAt > now) this.dropped++;
    }
    if (this.dropped > 0 && this.warnings.pass() !== undefined) {
      this.logger.warn(
        { store: "memory", maxMarkers: this.max, forgotten: this.dropped },
        `the memory store holds ${this.max} deduplication markers, its bound: the oldest are forgotten (${this.dropped} since the last warning), and a repeat of a delivery whose marker is forgotten is accepted again as a new event; the embedded and PostgreSQL stores keep every marker for its ttlMs`,
      );
      this.dropped = 0;
    }
  }

  private compact(): void {
    const kept = new Fifo<{ readonly key: string; readonly entry: StateEntry }>();
    for (const item of this.order) if (this.entries.get(item.key) === item.entry) kept.push(item);
    this.order = kept;
  }
}
