/**
 * The bare servers' queue: an in-memory array consumed by a task, one event at a time per
 * worker, with up to `concurrency` workers. With `delayMs` 0 the task is a no-op (async, as a
 * framework task is); a positive delay makes the task slower than arrivals (backlog case).
 * Workers start in a microtask, the cheapest way to run after the request's callback (a
 * setImmediate per request costs the baseline an extra turn of the event loop).
 */
export class BareQueue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  private running = 0;

  constructor(
    private readonly task: (item: T) => Promise<void>,
    private readonly concurrency = 16,
  ) {}

  get depth(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
    if (this.running < this.concurrency) {
      this.running++;
      queueMicrotask(() => void this.work());
    }
  }

  private shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  private async work(): Promise<void> {
    for (let item = this.shift(); item !== undefined; item = this.shift()) {
      try {
        await this.task(item);
      } catch {
        // a bare task has nobody to report to
      }
    }
    this.running--;
  }
}

export function taskTakingMs(delayMs: number): (item: unknown) => Promise<void> {
  if (delayMs <= 0) return async () => {};
  return () => new Promise((resolve) => setTimeout(resolve, delayMs));
}

/**
 * The bare servers' task for each event, as configured: with `emit`, its small result goes on
 * to a second queue whose task does nothing, as the framework's second task does.
 */
export function eventQueue<T extends { path: string; received_at: number }>(config: { taskDelayMs?: number; concurrency?: number; emit?: boolean }): BareQueue<T> {
  const task = taskTakingMs(config.taskDelayMs ?? 0);
  const concurrency = config.concurrency ?? 16;
  if (!config.emit) return new BareQueue<T>(task, concurrency);
  const next = new BareQueue<{ path: string; at: number }>(async () => {}, concurrency);
  return new BareQueue<T>(async (event) => {
    await task(event);
    next.push({ path: event.path, at: event.received_at });
  }, concurrency);
}
