/**
 * The one interface through which cross-cutting concerns (metrics, refusal logs, events) see
 * the app's work. The receiver's route wrapper reports every answered webhook request, the
 * listener every 404/405, the runner every task run, the store wrapper every queue write.
 * Observers must not throw and must be cheap: they run on the request path.
 */
export interface AppObserver {
  onRequest?(outcome: RequestOutcome): void;
  /** A task's handler is about to be called (the debug delivery log). */
  onTaskStart?(run: TaskRunStart): void;
  onTaskRun?(outcome: TaskRunOutcome): void;
  onStoreWrite?(write: StoreWrite): void;
  /**
   * True when onTaskRun wants only runs that did not end `done` (retries, dead letters,
   * answered failures): the runner then builds no outcome for the common, successful run.
   */
  readonly onlyUnfinishedRuns?: boolean;
  /** The id of the event whose run emitted `eventId`, when known (the debug delivery log): a run's lines then name it. */
  parentOf?(eventId: string): string | undefined;
}

/** How one HTTP request ended. */
export interface RequestOutcome {
  /** The task whose source answered; "" for requests no source matched (404, 405). */
  readonly source: string;
  /** The source's path, or "" when no source matched (an unknown path is never a label). */
  readonly route: string;
  /** The listener that answered, e.g. "http://127.0.0.1:8080". */
  readonly origin: string;
  readonly method: string;
  readonly status: number;
  /** "accepted", "duplicate", "handshake", or the error code of the refusal ("signature_mismatch", "payload_too_large", ...). */
  readonly code: string;
  readonly durationSeconds: number;
  /** Set for refusals (status >= 400) only: they are the ones logged. */
  readonly refusal?: RefusalDetail;
}

export interface RefusalDetail {
  /** The client's address (as the source's trustProxy setting resolves it). */
  readonly client: string;
  /** The request's X-Request-Id when it sent a sane one; otherwise a new id. */
  readonly requestId: string;
  /** The path asked for (cut to 200 characters): for a 404 it is the unknown path. */
  readonly path: string;
}

/** A run about to start. */
export interface TaskRunStart {
  readonly task: string;
  readonly queue: string;
  /** The message's id: the event id, or `<id>@<task>` for one task's copy of an event several tasks take. */
  readonly eventId: string;
  /** 1 on the first delivery. */
  readonly attempt: number;
}

/** What became of one task run. */
export type TaskRunOutcomeName = "success" | "retry" | "dead_letter" | "timeout";

export interface TaskRunOutcome {
  readonly task: string;
  readonly queue: string;
  readonly eventId: string;
  /** 1 on the first delivery. */
  readonly attempt: number;
  /** `timeout` when the handler outran the task's timeoutMs; it is then retried or dead-lettered as `next` says. */
  readonly outcome: TaskRunOutcomeName;
  /** Where the event went: done, back in the queue for a retry, to the dead letters, or answered to a waiting caller as an error. */
  readonly next: "done" | "retry" | "dead_letter" | "answered";
  readonly durationSeconds: number;
  /** The error the handler threw (or the timeout), when it failed. */
  readonly error?: unknown;
  /** When the retry is due (ms since the epoch), for `next: "retry"`. */
  readonly retryAt?: number;
}

/** One write to the store's queues (enqueue, complete, retryLater, deadLetter), timed. */
export interface StoreWrite {
  readonly engine: string;
  readonly operation: "enqueue" | "complete" | "retryLater" | "deadLetter";
  readonly durationSeconds: number;
}

/** Several observers as one; a throwing observer is skipped, the others still run. */
export function combineObservers(observers: readonly AppObserver[]): AppObserver | undefined {
  if (observers.length === 0) return undefined;
  const requests = observers.filter((o) => o.onRequest !== undefined);
  const starts = observers.filter((o) => o.onTaskStart !== undefined);
  const runs = observers.filter((o) => o.onTaskRun !== undefined);
  const writes = observers.filter((o) => o.onStoreWrite !== undefined);
  // Plain loops with try/catch: no closure per call, this runs for every request.
  const parents = observers.find((o) => o.parentOf !== undefined);
  return {
    onlyUnfinishedRuns: runs.every((o) => o.onlyUnfinishedRuns === true),
    parentOf: parents === undefined ? undefined : (eventId) => parents.parentOf!(eventId),
    onRequest: requests.length === 0 ? undefined : (outcome) => {
      for (const o of requests) {
        try {
          o.onRequest!(outcome);
        } catch {
          // An observer's bug must not fail a request.
        }
      }
    },
    onTaskStart: starts.length === 0 ? undefined : (run) => {
      for (const o of starts) {
        try {
          o.onTaskStart!(run);
        } catch {
          // Nor a task.
        }
      }
    },
    onTaskRun: runs.length === 0 ? undefined : (outcome) => {
      for (const o of runs) {
        try {
          o.onTaskRun!(outcome);
        } catch {
          // Nor a task.
        }
      }
    },
    onStoreWrite: writes.length === 0 ? undefined : (write) => {
      for (const o of writes) {
        try {
          o.onStoreWrite!(write);
        } catch {
          // Nor a store write.
        }
      }
    },
  };
}
