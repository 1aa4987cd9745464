import type { DeliveryOutcome, OutcomeWait } from "../sources/source";

interface Waiter {
  resolve(outcome: DeliveryOutcome): void;
  timer: NodeJS.Timeout;
}

/**
 * Sources that answer with the task's result (ack "processed", reply "result") wait here for
 * the first delivery of their event. A waiter that times out is removed, and the event then
 * follows the normal retry path.
 */
export class OutcomeRegistry {
  private readonly waiters = new Map<string, Waiter>();
  private readonly observers = new Set<(id: string, outcome: DeliveryOutcome) => void>();

  /** Calls `observer` with every outcome settled, waited for or not (webhook-tasks/testing). */
  observe(observer: (id: string, outcome: DeliveryOutcome) => void): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  expect(id: string, timeoutMs: number): OutcomeWait {
    let resolveOutcome!: (outcome: DeliveryOutcome) => void;
    const promise = new Promise<DeliveryOutcome>((resolve) => (resolveOutcome = resolve));
    const timer = setTimeout(() => {
      if (this.waiters.get(id)?.timer !== timer) return;
      this.waiters.delete(id);
      resolveOutcome({ ok: false, timedOut: true });
    }, timeoutMs);
    this.waiters.set(id, { resolve: resolveOutcome, timer });
    return {
      promise,
      cancel: () => {
        const waiter = this.waiters.get(id);
        if (waiter?.timer !== timer) return;
        clearTimeout(timer);
        this.waiters.delete(id);
      },
    };
  }

  /** Whether settling `id` would tell anyone: callers skip building the outcome when not. */
  awaits(id: string): boolean {
    // Most apps have no waiter at all: the id is not hashed then.
    return this.observers.size > 0 || (this.waiters.size > 0 && this.waiters.has(id));
  }

  settle(id: string, outcome: DeliveryOutcome): boolean {
    for (const observer of this.observers) observer(id, outcome);
    const waiter = this.waiters.get(id);
    if (!waiter) return false;
    clearTimeout(waiter.timer);
    this.waiters.delete(id);
    waiter.resolve(outcome);
    return true;
  }

  /** Shutdown: answer every waiter as timed out, so its request gets the fixed response. */
  releaseAll(): void {
    for (const [id, waiter] of this.waiters) {
      clearTimeout(waiter.timer);
      this.waiters.delete(id);
      waiter.resolve({ ok: false, timedOut: true });
    }
  }
}
