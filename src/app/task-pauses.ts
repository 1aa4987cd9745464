import type { PauseStore } from "../store/history";
import type { Logger } from "../util/logger";

/** How long after a failed read of the paused set it is read again. */
const RETRY_MS = 1_000;
/** At most one line per this while the reads keep failing (a database down for minutes). */
const LOG_MS = 5_000;

/** What pausing needs of a task's runner. */
export interface Pausable {
  setPaused(paused: boolean): void;
}

/**
 * Keeps each runner paused or not as the store's paused set says: read before the runners
 * start (a pause holds across restarts on a durable store), then again whenever the store tells
 * of a change (this process, or another replica).
 */
export class TaskPauses {
  private unwatch: (() => void) | undefined;
  private refreshing = false;
  private refreshAgain = false;
  private current = new Set<string>();
  private retryTimer: NodeJS.Timeout | undefined;
  private loggedAt = 0;
  private suppressed = 0;
  /** Changes made here (set): a read of the store begun before one may answer the set before it. */
  private changes = 0;

  constructor(
    private readonly pauses: PauseStore,
    private readonly runners: ReadonlyMap<string, Pausable>,
    private readonly logger: Logger,
  ) {}

  /**
   * Reads the paused set and applies it, then follows its changes. A store that cannot be read
   * now (a database down at start: the app starts and answers 503) holds every task until the
   * set is read, so that a task paused before the restart never runs meanwhile.
   */
  async start(): Promise<void> {
    this.unwatch = this.pauses.watch(() => this.refresh());
    let paused: ReadonlySet<string>;
    try {
      paused = await this.pauses.paused();
    } catch (error) {
      for (const runner of this.runners.values()) runner.setPaused(true);
      this.current = new Set(this.runners.keys());
      this.failedRead(error);
      return;
    }
    this.apply(paused);
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /** Whether `task`'s runner is paused in this process now (as last read from the store). */
  isPaused(task: string): boolean {
    return this.current.has(task);
  }

  /** Pauses or resumes one task here at once, then in the store (where other replicas see it). */
  async set(task: string, paused: boolean): Promise<void> {
    await this.pauses.setPaused(task, paused);
    this.changes++;
    const next = new Set(this.current);
    if (paused) next.add(task);
    else next.delete(task);
    this.apply(next);
  }

  private refresh(): void {
    if (this.unwatch === undefined) return;
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    const changes = this.changes;
    this.pauses.paused().then(
      (set) => {
        // Begun before a pause or resume made here: it may not show it, and would undo it for a
        // moment (a task paused on PostgreSQL ran an event accepted after pause() resolved). Read again.
        if (changes !== this.changes) this.refreshAgain = true;
        else this.apply(set);
      },
      (error: unknown) => this.failedRead(error),
    ).finally(() => {
      this.refreshing = false;
      if (this.refreshAgain) {
        this.refreshAgain = false;
        this.refresh();
      }
    });
  }

  /** The change that was heard (or the set at start) is not heard again: read again until it is known. */
  private failedRead(error: unknown): void {
    if (Date.now() - this.loggedAt < LOG_MS) this.suppressed++;
    else {
      this.logger.error({ err: error, ...(this.suppressed > 0 ? { suppressed: this.suppressed } : {}) }, "cannot read the paused tasks from the store; trying again every second");
      this.loggedAt = Date.now();
      this.suppressed = 0;
    }
    this.retryTimer ??= setTimeout(() => {
      this.retryTimer = undefined;
      this.refresh();
    }, RETRY_MS);
    this.retryTimer.unref();
  }

  private apply(paused: ReadonlySet<string>): void {
    for (const [task, runner] of this.runners) {
      const now = paused.has(task);
      if (now !== this.current.has(task)) this.logger.info({ task }, now ? "task paused: its events are stored, none runs until it is resumed" : "task resumed");
      runner.setPaused(now);
    }
    this.current = new Set(paused);
  }
}
