import { performance } from "node:perf_hooks";

/**
 * What a deadline list needs of a run: when it started (performance.now() milliseconds), and
 * two links the list sets (a run is in one list at most).
 */
export interface TimedRun {
  readonly started: number;
  /** The list's links: the run started before and after this one (undefined at either end). */
  deadlinePrev: TimedRun | undefined;
  deadlineNext: TimedRun | undefined;
  /** True while the list tracks the run. */
  deadlineTracked: boolean;
}

/**
 * The timeouts of one task's runs with one timer, instead of a timer set and cleared per run
 * (a run-to-run cost on the hot path). Every run of a task has the same timeout, so runs kept
 * in start order expire in that order: the timer waits for the oldest run still going, and when
 * it fires it expires what is due and waits again for the new oldest.
 *
 * The runs are linked through their own fields rather than kept in a Set: a Set with an entry
 * added and removed per run replaces its hash table again and again, and V8 links each
 * replaced table to the next one; once one of them reached the old generation it kept every
 * later table, and the events they referenced, alive through minor collections (every event
 * was copied twice and promoted, then freed only by a full collection).
 */
export class RunDeadlines<R extends TimedRun> {
  /** The oldest run still going and the newest. */
  private head: R | undefined;
  private tail: R | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly timeoutMs: number,
    /** Called once for a run that outlived the timeout; it is no longer tracked. */
    private readonly expire: (run: R) => void,
  ) {}

  add(run: R): void {
    run.deadlinePrev = this.tail;
    run.deadlineNext = undefined;
    run.deadlineTracked = true;
    if (this.tail === undefined) this.head = run;
    else this.tail.deadlineNext = run;
    this.tail = run;
    if (this.timer === undefined) this.arm(this.timeoutMs);
  }

  /** The run ended: true when it was still tracked, false when it had expired already. */
  delete(run: R): boolean {
    if (!run.deadlineTracked) return false;
    const prev = run.deadlinePrev as R | undefined;
    const next = run.deadlineNext as R | undefined;
    if (prev === undefined) this.head = next;
    else prev.deadlineNext = next;
    if (next === undefined) this.tail = prev;
    else next.deadlinePrev = prev;
    // Unlinked for good: a finished run must not keep the runs around it alive.
    run.deadlinePrev = run.deadlineNext = undefined;
    run.deadlineTracked = false;
    return true;
  }

  /**
   * The runner stopped without them: every run still tracked is dropped and the timer cleared,
   * so a handler outliving the stop neither times out nor settles anything once the store closed.
   */
  abandonAll(): void {
    for (let run = this.head; run !== undefined; run = this.head) this.delete(run);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
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
    for (let run = this.head; run !== undefined; run = this.head) {
      const due = run.started + this.timeoutMs;
      if (due > now) return this.arm(Math.max(1, Math.ceil(due - now)));
      this.delete(run);
      this.expire(run);
    }
  };
}
