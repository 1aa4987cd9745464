import { errorMessage } from "../util/logger";

/** A task's predicate: does it take this event (or emitted value)? */
export type Accepts = (event: unknown) => boolean;

/**
 * A task's filter threw. Nothing is stored for the event: a webhook is
 * answered 500 `filter_failed` (the sender sends it again), an emitted value fails the task
 * that emitted it (retried, then a dead letter). Storing the other tasks' copies alone would
 * make the sender's retry give them a second copy.
 */
export class FilterError extends Error {
  readonly code = "filter_failed";
  constructor(
    readonly task: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "FilterError";
  }
}

/** Runs `task`'s predicate (its `on` and `filter`, task-match.ts) on `event`; a throw is a FilterError. */
export function runFilter(accepts: Accepts, event: unknown, task: string): boolean {
  try {
    return accepts(event) === true;
  } catch (error) {
    throw new FilterError(task, `task "${task}": filter threw: ${errorMessage(error)}`, { cause: error });
  }
}
