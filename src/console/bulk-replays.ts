import type { BulkReplayOptions, BulkReplayResult, EventsApi, ReplayFilter } from "../app/events-api";
import { errorMessage, type Logger } from "../util/logger";

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

/** The last few bulk replays of this process (a replay of thousands takes minutes at its pace). */
export class BulkReplays {
  private readonly jobs: BulkReplayJob[] = [];

  constructor(
    private readonly events: EventsApi,
    private readonly logger: Logger,
    private readonly keep = 10,
  ) {}

  start(filter: ReplayFilter, filterText: string, options: BulkReplayOptions): BulkReplayJob {
    const job: BulkReplayJob = { startedAt: Date.now(), filter: filterText, task: options.task };
    this.jobs.unshift(job);
    this.jobs.splice(this.keep);
    this.events.replay(filter, { ...options, dryRun: false }).then(
      (result) => {
        job.result = result;
        job.finishedAt = Date.now();
        this.logger.info({ matched: result.matched, queued: result.queued }, "console: bulk replay done");
      },
      (error: unknown) => {
        job.error = errorMessage(error);
        job.finishedAt = Date.now();
        this.logger.error({ error: job.error }, "console: bulk replay failed");
      },
    );
    return job;
  }

  recent(): readonly BulkReplayJob[] {
    return this.jobs;
  }

  get running(): boolean {
    return this.jobs.some((job) => job.finishedAt === undefined);
  }
}
