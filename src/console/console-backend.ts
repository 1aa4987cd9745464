import type { AppStatus } from "../app/app-status";
import type { EventsApi } from "../app/events-api";
import type { ActivityRow } from "../store/history";
import type { DeadLetterStore, StateStore } from "../store/store";

/**
 * What the console reads and asks of the app: its public methods only (the same the CLI uses),
 * gathered by the app when it mounts the console. The console knows no store internals.
 */
export interface ConsoleBackend {
  readonly appName: string;
  readonly events: EventsApi;
  status(): Promise<AppStatus>;
  /** Per task and bucket, for events received since `since` (empty without a history). */
  activity(since: number, bucketMs: number): Promise<readonly ActivityRow[]>;
  /** Whether the store keeps a history at all (`history: false` turns it off). */
  readonly historyEnabled: boolean;
  paused(): Promise<ReadonlySet<string>>;
  pause(task: string): Promise<void>;
  resume(task: string): Promise<void>;
  readonly deadLetters: DeadLetterStore;
  /** The tasks, each with the label of the webhook source that feeds it, or the queue it reads. */
  readonly tasks: readonly ConsoleTask[];
  /** Where sign-outs are noted (the app's store, see ConsoleSignOuts); without it, in this process only. */
  readonly signOuts?: StateStore;
  /** Where the running bulk replay is noted (the app's store, see BulkReplays); without it, in this process only. */
  readonly bulkReplays?: StateStore;
}

export interface ConsoleTask {
  readonly name: string;
  /** The webhook source's label; undefined for a task that reads a queue. */
  readonly source: string | undefined;
  /** The queue a task reads, when it reads one. */
  readonly input: string | undefined;
  /** The task's own queue in the store: where its dead letters go back. */
  readonly queue: string;
}
