import { Fifo } from "../../store/fifo";
import type { QueuedMessage } from "../../store/store";
import type { TaskFlow } from "./flow-options";

/**
 * A task's flow limits enforced in its process, for the engines that keep their queues in
 * this process (memory, embedded): the process is the only claimer, so counting here is exact.
 * (PostgreSQL counts in its claim instead, across replicas: see flow-claim-sql.ts.)
 *
 * The runner hands every claimed message to `admit`. One that may start takes its slot (a run
 * at once of its concurrency key, a start in its rate key's window) and is returned; the others
 * wait here, still claimed in the store (so a crash gives them back), in arrival order per key:
 * behind a running slot of their concurrency key, or behind the rate window of their rate key.
 * `finished` frees a slot; a message that may start then, or when a rate window moves on, goes
 * to `ready` and `onReady` is called. A message in `ready` may wait there for a slot of the
 * runner: it holds its place in its rate window, and its start is counted when the runner takes
 * it (`take`), so that a backlog made ready while the runner was busy does not start at once.
 */
/** Rate keys below which the idle ones are not swept. */
const MIN_SWEEP = 1_024;

export class FlowGate {
  /** Messages that may start, waiting for a free slot of the runner. */
  readonly ready = new Fifo<QueuedMessage>();
  private readonly running = new Map<string, number>();
  /** Per rate key, the start times inside the current window, oldest first (at most `limit`). */
  private readonly starts = new Map<string, number[]>();
  /** Per rate key, the messages in `ready`: not started yet, they hold their place in the window. */
  private readonly reserved = new Map<string, number>();
  /** Rate keys kept before the idle ones are swept out (see window()). */
  private sweepAt = MIN_SWEEP;
  private readonly waitingForSlot = new Map<string, Fifo<QueuedMessage>>();
  private readonly waitingForRate = new Map<string, Fifo<QueuedMessage>>();
  private waiting = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(
    private readonly flow: TaskFlow,
    private readonly onReady: () => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Messages held back by a limit (status: "limited"). */
  get limited(): number {
    return this.waiting;
  }

  /** Claimed messages the gate holds (waiting or ready): what a claim must not pile up without bound. */
  get held(): number {
    return this.waiting + this.ready.length;
  }

  /** The messages of `claimed` that may start now, in order; the others wait here. */
  admit(claimed: readonly QueuedMessage[]): QueuedMessage[] {
    const out: QueuedMessage[] = [];
    const now = this.now();
    for (const message of claimed) if (this.tryStart(message, now)) out.push(message);
    return out;
  }

  /** A run admitted here ended (or was never started): its concurrency slot is free. */
  finished(message: QueuedMessage): void {
    if (this.flow.concurrency === undefined) return;
    const key = message.concurrencyKey ?? "";
    const left = (this.running.get(key) ?? 1) - 1;
    if (left > 0) this.running.set(key, left);
    else this.running.delete(key);
    const line = this.waitingForSlot.get(key);
    if (line === undefined) return;
    const next = line.shift()!;
    if (line.length === 0) this.waitingForSlot.delete(key);
    this.waiting--;
    if (this.tryStart(next, this.now(), true)) {
      this.ready.push(next);
      this.onReady();
    }
  }

  /** The next message of `ready`, its start counted now (the runner starts it at once). */
  take(): QueuedMessage | undefined {
    const message = this.ready.shift();
    const { rate } = this.flow;
    if (message === undefined || rate === undefined) return message;
    const key = message.rateKey ?? "";
    const left = (this.reserved.get(key) ?? 1) - 1;
    if (left > 0) this.reserved.set(key, left);
    else this.reserved.delete(key);
    const now = this.now();
    const window = this.window(key, now, rate.periodMs);
    window.push(now);
    // Messages waiting behind a window full of reservations had no time to wake at: they have one now.
    if (this.waitingForRate.has(key)) this.wakeAt(window[0] + rate.periodMs);
    return message;
  }

  /** Everything the gate holds, handed back (shutdown: the runner releases them to the store). */
  drain(): QueuedMessage[] {
    const out = [...this.ready];
    for (const line of [...this.waitingForSlot.values(), ...this.waitingForRate.values()]) out.push(...line);
    this.waitingForSlot.clear();
    this.waitingForRate.clear();
    while (this.ready.shift() !== undefined);
    this.reserved.clear();
    this.waiting = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    return out;
  }

  /**
   * Takes the message's slots when both limits allow it; else queues it behind the one that does
   * not. `reserve`: it goes to `ready`, and its start is counted when it is taken.
   */
  private tryStart(message: QueuedMessage, now: number, reserve = false): boolean {
    const { concurrency, rate } = this.flow;
    const cKey = message.concurrencyKey ?? "";
    if (concurrency !== undefined && (this.running.get(cKey) ?? 0) >= concurrency.limit) {
      this.wait(this.waitingForSlot, cKey, message);
      return false;
    }
    if (rate !== undefined) {
      const rKey = message.rateKey ?? "";
      const window = this.window(rKey, now, rate.periodMs);
      const taken = window.length + (this.reserved.get(rKey) ?? 0);
      // Behind others of its key already waiting for the window: keeps arrival order per key.
      if (taken >= rate.limit || this.waitingForRate.has(rKey)) {
        this.wait(this.waitingForRate, rKey, message);
        // A window full of reservations only: the first of them to start sets the wake-up (take).
        if (taken < rate.limit) this.wakeAt(now);
        else if (window.length > 0) this.wakeAt(window[0] + rate.periodMs);
        return false;
      }
      if (reserve) this.reserved.set(rKey, (this.reserved.get(rKey) ?? 0) + 1);
      else window.push(now);
    }
    if (concurrency !== undefined) this.running.set(cKey, (this.running.get(cKey) ?? 0) + 1);
    return true;
  }

  /** The key's starts inside the window ending now. */
  private window(key: string, now: number, periodMs: number): number[] {
    let starts = this.starts.get(key);
    if (starts === undefined) {
      // Keys seen once (a key per customer) must not stay: once the map doubled, the keys whose
      // window is empty go. Each key is swept at most once per doubling, so this costs O(1) a key.
      if (this.starts.size >= this.sweepAt) this.sweep(now, periodMs);
      this.starts.set(key, (starts = []));
    }
    let old = 0;
    while (old < starts.length && starts[old] <= now - periodMs) old++;
    if (old > 0) starts.splice(0, old);
    return starts;
  }

  private sweep(now: number, periodMs: number): void {
    for (const [key, starts] of this.starts) if (starts.length === 0 || starts[starts.length - 1] <= now - periodMs) this.starts.delete(key);
    this.sweepAt = Math.max(MIN_SWEEP, 2 * this.starts.size);
  }

  private wait(lines: Map<string, Fifo<QueuedMessage>>, key: string, message: QueuedMessage): void {
    let line = lines.get(key);
    if (line === undefined) lines.set(key, (line = new Fifo()));
    line.push(message);
    this.waiting++;
  }

  private wakeAt(at: number): void {
    if (at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(this.rateWindowMoved, Math.max(0, at - this.now()));
    this.timer.unref();
  }

  /** A rate window moved on: the messages waiting for it start as far as it allows. */
  private readonly rateWindowMoved = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    const rate = this.flow.rate!;
    let any = false;
    for (const [key, line] of [...this.waitingForRate]) {
      this.waitingForRate.delete(key);
      const pending = [...line];
      this.waiting -= pending.length;
      // Re-admitted in order; the first that cannot start re-queues itself and every later one.
      for (const message of pending) {
        if (this.tryStart(message, now, true)) {
          this.ready.push(message);
          any = true;
        }
      }
      const window = this.window(key, now, rate.periodMs);
      if (this.waitingForRate.has(key) && window.length > 0) this.wakeAt(window[0] + rate.periodMs);
    }
    if (any) this.onReady();
  };
}
