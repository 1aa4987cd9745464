/** Five minutes: long enough for slow work, short enough that a hung handler gives its slot back. */
export const DEFAULT_TASK_TIMEOUT_MS = 5 * 60_000;

/** The failure recorded for a run that outlived its task's `timeoutMs`. */
export class TaskTimeoutError extends Error {
  constructor(readonly task: string, readonly timeoutMs: number) {
    super(`task "${task}" did not finish within ${timeoutMs} ms`);
    this.name = "TaskTimeoutError";
  }
}
