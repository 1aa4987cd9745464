/** A stopping runner's wait for its runs to end: one promise per waiter, with a time limit. */
export class IdleWait {
  private waiters: Array<() => void> = [];

  /** True once `settled(true)` is called, false when `timeoutMs` passes first. */
  async until(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.waiters.push(() => resolve(true)));
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const drained = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    return drained;
  }

  /** The runner's state changed: when it is idle, every waiter is told. */
  settled(idle: boolean): void {
    if (!idle) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
