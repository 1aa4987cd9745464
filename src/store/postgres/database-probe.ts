/** Longest pause between two tries while the database refuses the store's role. */
const MAX_REFUSED_INTERVAL_MS = 10_000;

/**
 * While the database cannot be reached (or the schema could not be opened), tries `attempt`
 * every `intervalMs`, one try at a time, until one succeeds. While the failure is one that an
 * operator must fix (`slowsDown`: the role refused), the pause doubles up to 10 s, so that a
 * rotated password costs a login attempt now and then, not one a second forever.
 */
export class DatabaseProbe {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** Counts starts: a try still out from before a stop and start must not start a second chain. */
  private generation = 0;
  private delayMs: number;

  constructor(
    private readonly intervalMs: number,
    private readonly attempt: () => Promise<void>,
    private readonly onSuccess: () => void,
    private readonly onFailure: (error: unknown) => void,
    private readonly slowsDown: (error: unknown) => boolean = () => false,
  ) {
    this.delayMs = intervalMs;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.generation++;
    this.delayMs = this.intervalMs;
    this.schedule();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.tick(), this.delayMs);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    const generation = this.generation;
    const current = () => this.running && generation === this.generation;
    this.attempt().then(
      () => {
        if (!current()) return; // stopped meanwhile
        this.stop();
        this.onSuccess();
      },
      (error: unknown) => {
        if (!current()) return;
        this.onFailure(error);
        this.delayMs = this.slowsDown(error) ? Math.min(MAX_REFUSED_INTERVAL_MS, this.delayMs * 2) : this.intervalMs;
        this.schedule();
      },
    );
  }
}
