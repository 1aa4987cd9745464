export interface GroupCommitLimits<T> {
  /** Most items in one statement. */
  readonly maxItems: number;
  /** Most bytes in one statement (a batch always takes at least one item). */
  readonly maxBytes: number;
  readonly sizeOf: (item: T) => number;
  /** Rows an item writes (default 1): `maxItems` bounds rows, so that a statement's parameters fit. */
  readonly rowsOf?: (item: T) => number;
}

interface Pending<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: the calls made during one event-loop turn, and those made while a batch is
 * being written, are written together by one `write` (one statement, one commit), so that a
 * burst of concurrent requests costs a few commits instead of one each. One batch is in flight
 * at a time, which also keeps the items in call order across batches.
 */
export class GroupCommit<T, R> {
  private pending: Array<Pending<T, R>> = [];
  private scheduled = false;
  private writing = false;
  private idleWaiters: Array<() => void> = [];
  /** Batches written so far (statements sent), for tests and benchmarks. */
  batches = 0;

  constructor(
    /** Writes a batch; resolves with one result per item, in order. */
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly limits: GroupCommitLimits<T>,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once nothing is waiting or being written. */
  idle(): Promise<void> {
    if (!this.writing && !this.scheduled && this.pending.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    while (this.pending.length > 0) {
      const batch = this.take();
      this.batches++;
      try {
        const results = await this.write(batch.map((p) => p.item));
        batch.forEach((p, i) => p.resolve(results[i]));
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.writing = false;
    for (const waiter of this.idleWaiters.splice(0)) waiter();
  }

  private take(): Array<Pending<T, R>> {
    const { maxItems, maxBytes, sizeOf, rowsOf } = this.limits;
    let bytes = 0;
    let rows = 0;
    let n = 0;
    while (n < this.pending.length) {
      const item = this.pending[n].item;
      bytes += sizeOf(item);
      rows += rowsOf === undefined ? 1 : rowsOf(item);
      if (n > 0 && (bytes > maxBytes || rows > maxItems)) break;
      n++;
    }
    return this.pending.splice(0, n);
  }
}
