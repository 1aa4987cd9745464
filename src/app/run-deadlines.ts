import { performance } from "node:perf_hooks";

/** What a deadline list needs of a run: when it started (performance.now() milliseconds). */
export interface TimedRun {
  readonly started: number;
}

/**
 * The timeouts of one task's runs with one timer, instead of a timer set and cleared per run
 * (a run-to-run cost on the hot path). Every run of a task has the same timeout, so runs kept
 * in start order expire in that order: the timer waits for the oldest run still going, and when
 * it fires it expires what is due and waits again for the new oldest.
 */
export class RunDeadlines<R extends TimedRun> {
  /** Runs still going, in start order (a Set iterates in insertion order). */
  private readonly runs = new Set<R>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    /** Called once for a run that outlived the timeout; it is no longer tracked. */
    private readonly expire: (run: R) => void,
  ) {}

  add(run: R): void {
    this.runs.add(run);
    if (this.timer === undefined) this.arm(this.timeoutMs);
  }

  /** The run ended: true when it was still tracked, false when it had expired already. */
  delete(run: R): boolean {
    return this.runs.delete(run);
  }

  private arm(ms: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(this.check, ms);
    // A hung handler must not keep a stopping process alive for minutes.
    this.timer.unref();
  }

  private readonly check = (): void => {
    this.timer = undefined;
    const now = performance.now();
    for (const run of this.runs) {
      const due = run.started + this.timeoutMs;
      if (due > now) return this.arm(Math.max(1, Math.ceil(due - now)));
      this.runs.delete(run);
      this.expire(run);
    }
  };
}
