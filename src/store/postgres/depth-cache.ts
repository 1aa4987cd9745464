/**
 * Queue depths for `admit`, which must answer without a round trip: the count of each queue
 * as last read from the database, plus what this process added and removed since. Other
 * processes' traffic shows at the next refresh; between refreshes a queue may overshoot its
 * limit by what the other processes admitted meanwhile.
 */
export class DepthCache {
  private readonly counted = new Map<string, number>();
  private readonly changes = new Map<string, number>();

  count(queue: string): number {
    return (this.counted.get(queue) ?? 0) + (this.changes.get(queue) ?? 0);
  }

  /** This process added (positive) or removed (negative) messages of `queue`. */
  adjust(queue: string, by: number): void {
    this.changes.set(queue, (this.changes.get(queue) ?? 0) + by);
  }

  /**
   * Replaces the counts with fresh ones read by `read`. Changes made while it read are kept on
   * top (they may be in the count already: a short overcount, corrected by the next refresh).
   */
  async refresh(read: () => Promise<Map<string, number>>): Promise<void> {
    const before = new Map(this.changes);
    const fresh = await read();
    this.counted.clear();
    for (const [queue, n] of fresh) this.counted.set(queue, n);
    for (const [queue, n] of this.changes) {
      const since = n - (before.get(queue) ?? 0);
      if (since === 0) this.changes.delete(queue);
      else this.changes.set(queue, since);
    }
  }
}
