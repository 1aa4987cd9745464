import { randomUUID } from "node:crypto";
import type { BulkReplayOptions, BulkReplayResult, EventsApi, ReplayFilter } from "../app/events-api";
import { ReplayError, ReplayStoppedError } from "../app/event-replay";
import type { StateStore } from "../store/store";
import { errorMessage, type Logger } from "../util/logger";

/** The state namespace where a console notes the bulk replay it runs (the app's store, shared by its replicas). */
export const CONSOLE_BULK_REPLAYS = "webhook-tasks:console-bulk-replays";

/** How long the note of a running bulk replay holds unless renewed: a replica that dies blocks the others no longer. */
const HOLD_MS = 30_000;

/** A bulk replay the console started: it runs paced in the background, the pages show how it went. */
export interface BulkReplayJob {
  readonly startedAt: number;
  /** The filter as the list's query string, to link to the events it matched. */
  readonly filter: string;
  readonly task: string | undefined;
  result?: BulkReplayResult;
  error?: string;
  finishedAt?: number;
}

/**
 * The last few bulk replays of this process (a replay of thousands takes minutes at its pace),
 * one at a time. With `shared` (the app's store), one at a time across every replica of the
 * app too: a form resent through a load balancer reaches another replica's console. The app's
 * stop ends the one running (the app's replays end) and waits for its note to be removed.
 */
export class BulkReplays {
  private readonly jobs: BulkReplayJob[] = [];
  private readonly key: string;
  /** The running one's end, its note removed. */
  private finishing: Promise<void> | undefined;
  /** Starts waiting for the shared note: one may take it after stop() began, and must give it back. */
  private readonly starting = new Set<Promise<void>>();
  private stopping = false;

  constructor(
    private readonly events: EventsApi,
    private readonly logger: Logger,
    private readonly shared?: StateStore,
    appName = "",
    private readonly keep = 10,
  ) {
    this.key = `running:${appName}`;
  }

  /**
   * Starts one, or answers undefined while one runs (here, or on another replica). Throws a
   * ReplayError once the app is stopping.
   */
  async start(filter: ReplayFilter, filterText: string, options: BulkReplayOptions): Promise<BulkReplayJob | undefined> {
    this.refuseWhenStopping();
    const attempt = this.startNow(filter, filterText, options);
    // stop() waits for it: a note taken while the app began to stop is given back before the store closes.
    const settled = attempt.then(
      () => undefined,
      () => undefined,
    );
    this.starting.add(settled);
    try {
      return await attempt;
    } finally {
      this.starting.delete(settled);
    }
  }

  private async startNow(filter: ReplayFilter, filterText: string, options: BulkReplayOptions): Promise<BulkReplayJob | undefined> {
    if (this.running) return undefined;
    const token = randomUUID();
    if (this.shared !== undefined && !(await this.shared.setIfAbsent(this.key, token, { ttlMs: HOLD_MS }))) return undefined;
    // Another request of this process may have started one (or the app began to stop) while the store answered.
    if (this.running || this.stopping) {
      await this.release(token);
      this.refuseWhenStopping();
      return undefined;
    }
    const job: BulkReplayJob = { startedAt: Date.now(), filter: filterText, task: options.task };
    this.jobs.unshift(job);
    this.jobs.splice(this.keep);
    const renew =
      this.shared === undefined
        ? undefined
        : setInterval(() => {
            this.shared!.set(this.key, token, { ttlMs: HOLD_MS }).catch((error: unknown) => this.logger.warn({ error: errorMessage(error) }, "console: cannot renew the note of the running bulk replay"));
          }, HOLD_MS / 3);
    renew?.unref();
    const finish = async (): Promise<void> => {
      clearInterval(renew);
      await this.release(token);
      job.finishedAt = Date.now();
    };
    this.finishing = this.events.replay(filter, { ...options, dryRun: false }).then(
      (result) => {
        job.result = result;
        this.logger.info({ matched: result.matched, queued: result.queued }, "console: bulk replay done");
        return finish();
      },
      (error: unknown) => {
        job.error = errorMessage(error);
        if (error instanceof ReplayStoppedError) this.logger.warn({ matched: error.matched, queued: error.queued }, "console: bulk replay stopped as the app stops");
        else this.logger.error({ error: job.error }, "console: bulk replay failed");
        return finish();
      },
    );
    return job;
  }

  /**
   * The app stops: no bulk replay starts from now on. Resolves once the one running has ended
   * (the app's stop ends its replays) and its note is removed, before the store closes.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.starting);
    await this.finishing;
  }

  recent(): readonly BulkReplayJob[] {
    return this.jobs;
  }

  get running(): boolean {
    return this.jobs.some((job) => job.finishedAt === undefined);
  }

  private refuseWhenStopping(): void {
    if (this.stopping) throw new ReplayError("The app is stopping: no bulk replay starts now.");
  }

  /** Removes this process's note (not one another replica took after ours expired). */
  private async release(token: string): Promise<void> {
    if (this.shared === undefined) return;
    try {
      if ((await this.shared.get(this.key)) === token) await this.shared.delete(this.key);
    } catch (error) {
      this.logger.warn({ error: errorMessage(error) }, "console: cannot remove the note of the finished bulk replay; other replicas' consoles refuse bulk replays until it expires (30 s)");
    }
  }
}
