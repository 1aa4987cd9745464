import type { HistoryEvent, HistoryPage, HistoryQuery } from "../store/history";

/** The list filter a bulk replay takes (no paging). */
export type ReplayFilter = Omit<HistoryQuery, "limit" | "cursor">;

export interface ReplayOptions {
  /** Only this task's delivery (default: every task the event was handed to). */
  readonly task?: string;
}

export interface BulkReplayOptions extends ReplayOptions {
  /** Count what would be replayed, queue nothing. */
  readonly dryRun?: boolean;
  /** Most replays queued per second (default 50). */
  readonly ratePerSecond?: number;
  /**
   * Called with each original and its replay once the replay is queued, and awaited before the
   * next one (to discard a dead letter the replay supersedes, say). What it throws is logged
   * (`warn`) and the bulk replay goes on.
   */
  readonly onReplayed?: (original: HistoryEvent, replay: ReplayResult) => void | Promise<void>;
}

export interface ReplayResult {
  /** The replay's new event id (linked both ways: its `replayOf`, the original's `replays`). */
  readonly id: string;
  readonly replayOf: string;
  /** Tasks it was queued for. */
  readonly tasks: readonly string[];
}

export interface BulkReplayResult {
  /** Events the filter matched. */
  readonly matched: number;
  /** Replays queued (0 on a dry run). */
  readonly queued: number;
  readonly dryRun: boolean;
}

/** `app.events`: the history of accepted events, and replays of any of them. */
export interface EventsApi {
  list(query?: HistoryQuery): Promise<HistoryPage>;
  get(id: string): Promise<HistoryEvent | undefined>;
  replay(id: string, options?: ReplayOptions): Promise<ReplayResult>;
  replay(filter: ReplayFilter, options?: BulkReplayOptions): Promise<BulkReplayResult>;
}
