import type { HistoryStore } from "../store/history";
import type { Logger } from "../util/logger";

/** Prunes at least this often, so that a short retention stays short. */
const MAX_EVERY_MS = 60_000;
const MIN_EVERY_MS = 50;

/**
 * Prunes the history on a timer of its own (unref'd: it never keeps the process alive), never
 * on the request path: every tenth of the retention, at most a minute apart.
 */
export class HistoryPruner {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly history: HistoryStore,
    private readonly retainMs: number,
    private readonly maxEvents: number | undefined,
    private readonly logger: Logger,
  ) {}

  get everyMs(): number {
    return Math.max(MIN_EVERY_MS, Math.min(Math.floor(this.retainMs / 10), MAX_EVERY_MS));
  }

  start(): void {
    this.timer = setInterval(() => void this.pruneNow(), this.everyMs);
    this.timer.unref();
    void this.pruneNow();
  }

  /** Stops the timer and waits for a prune under way. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One prune (none when one is under way). */
  pruneNow(): Promise<void> {
    if (this.running !== undefined) return this.running;
    this.running = this.history
      .prune(Date.now() - this.retainMs, this.maxEvents)
      .then(
        (removed) => {
          if (removed > 0) this.logger.debug({ removed }, "pruned the event history");
        },
        (error: unknown) => this.logger.warn({ err: error }, "cannot prune the event history; trying again later"),
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}
