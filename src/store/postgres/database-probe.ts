/**
 * While the database cannot be reached (or the schema could not be opened), tries `attempt`
 * every `intervalMs`, one try at a time, until one succeeds.
 */
export class DatabaseProbe {
  private timer: NodeJS.Timeout | undefined;
  private trying = false;

  constructor(
    private readonly intervalMs: number,
    private readonly attempt: () => Promise<void>,
    private readonly onSuccess: () => void,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.trying) return;
    this.trying = true;
    this.attempt().then(
      () => {
        this.trying = false;
        if (!this.timer) return; // stopped meanwhile
        this.stop();
        this.onSuccess();
      },
      (error: unknown) => {
        this.trying = false;
        if (this.timer) this.onFailure(error);
      },
    );
  }
}
