/**
 * Response times in a fixed-bucket histogram: 10 µs buckets up to 100 ms, then 1 ms buckets up
 * to 60 s. Recording is one array increment, so the load generator spends its core on load.
 */
const FINE_US = 10;
const FINE_LIMIT_MS = 100;
const FINE_BUCKETS = (FINE_LIMIT_MS * 1000) / FINE_US;
const COARSE_BUCKETS = 60_000;

export class LatencyHistogram {
  private readonly counts = new Uint32Array(FINE_BUCKETS + COARSE_BUCKETS);
  private total = 0;
  private sum = 0;
  private max = 0;

  record(ms: number): void {
    const index = ms < FINE_LIMIT_MS
      ? Math.floor((ms * 1000) / FINE_US)
      : FINE_BUCKETS + Math.min(COARSE_BUCKETS - 1, Math.floor(ms - FINE_LIMIT_MS));
    this.counts[index]!++;
    this.total++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  get count(): number {
    return this.total;
  }

  get meanMs(): number {
    return this.total === 0 ? NaN : this.sum / this.total;
  }

  get maxMs(): number {
    return this.max;
  }

  /** The upper edge of the bucket holding the q-quantile (q in 0..1), in milliseconds. */
  quantileMs(q: number): number {
    if (this.total === 0) return NaN;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let i = 0; i < this.counts.length; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) {
        return i < FINE_BUCKETS ? ((i + 1) * FINE_US) / 1000 : FINE_LIMIT_MS + (i - FINE_BUCKETS + 1);
      }
    }
    return this.max;
  }
}
