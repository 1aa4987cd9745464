import { settledWithin } from "../util/settled-within";

/** A stopping runner's wait for its runs to end: one promise per waiter, with a time limit. */
export class IdleWait {
  private waiters: Array<() => void> = [];

  /** True once `settled(true)` is called, false when `timeoutMs` passes first. */
  until(timeoutMs: number): Promise<boolean> {
    return settledWithin(new Promise<void>((resolve) => this.waiters.push(resolve)), timeoutMs);
  }

  /** The runner's state changed: when it is idle, every waiter is told. */
  settled(idle: boolean): void {
    if (!idle) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
