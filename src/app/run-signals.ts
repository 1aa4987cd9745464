import { errorMessage, type Logger } from "../util/logger";

/** What `app.run()`'s signal handlers do with the app. */
export interface SignalledApp {
  readonly logger: Logger;
  /** Readiness turns 503 now, before anything closes. */
  shutDown(): void;
  /** How long readiness answers 503 before the drain starts. */
  readonly delayMs: number;
  stop(): Promise<void>;
}

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * `app.run()`'s SIGINT and SIGTERM handlers: the first signal stops the app (after the delay)
 * and exits the process, a second one exits at once. Removed once the app has stopped,
 * however it stopped: a stopped app's handler must not fire, and apps run one after another
 * in one process (tests, a supervisor restarting the app) must not pile theirs up.
 */
export class RunSignals {
  private signalled = false;
  private readonly handler = (signal: NodeJS.Signals): void => this.received(signal);

  constructor(private readonly app: SignalledApp) {}

  install(): void {
    for (const signal of SIGNALS) process.on(signal, this.handler);
  }

  remove(): void {
    for (const signal of SIGNALS) process.removeListener(signal, this.handler);
  }

  private received(signal: NodeJS.Signals): void {
    const { app } = this;
    if (this.signalled) {
      app.logger.warn(`second ${signal}: exiting without waiting`);
      // 128 + the signal's number, as a shell reports a process the signal ended: 130 for SIGINT, 143 for SIGTERM.
      process.exit(signal === "SIGTERM" ? 143 : 130);
    }
    this.signalled = true;
    app.shutDown();
    const { delayMs } = app;
    app.logger.info({ delayMs }, `${signal} received: readiness is 503 now; stopping after ${delayMs} ms`);
    const drain = delayMs > 0 ? new Promise<void>((resolve) => setTimeout(resolve, delayMs)) : Promise.resolve();
    drain.then(() => app.stop()).then(
      () => process.exit(0),
      (error: unknown) => {
        app.logger.error({ error: errorMessage(error) }, "stop failed");
        process.exit(1);
      },
    );
  }
}
