import { MinHeap } from "../store/min-heap";

/**
 * A runner's wake-ups at the retry times of its failed runs: one timer, for the earliest, and
 * the later times as plain numbers in a heap. A timer per retry cost some 400 bytes each (Node
 * keeps a list per distinct duration, and the jitter makes nearly every duration distinct):
 * 20,000 events in backoff held 8.5 MB of heap, growing with the backlog even where the store
 * keeps it on disk or in PostgreSQL. A number costs 8 bytes.
 */
export class RetryWakes {
  private readonly times = new MinHeap<number>((a, b) => a < b);
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(private readonly wake: () => void) {}

  /** Retry times not reached yet (or reached and not woken for yet). */
  get pending(): number {
    return this.times.size;
  }

  /** Calls `wake` just after `at` (ms since the epoch). */
  add(at: number): void {
    this.times.push(at);
    if (at < this.timerAt) this.arm(at);
  }

  /** Forgets every wake-up (the runner stops). */
  clear(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    while (this.times.pop() !== undefined);
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    // 5 ms past the time: the store's clock must see the retry as due.
    this.timer = setTimeout(this.fire, Math.max(0, at - Date.now()) + 5);
    this.timer.unref();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = Date.now();
    let due = false;
    for (let top = this.times.peek(); top !== undefined && top <= now; top = this.times.peek()) {
      this.times.pop();
      due = true;
    }
    const next = this.times.peek();
    if (next !== undefined) this.arm(next);
    if (due) this.wake();
  };
}
