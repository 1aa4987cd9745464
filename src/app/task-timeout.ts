/** Five minutes: long enough for slow work, short enough that a hung handler gives its slot back. */
export const DEFAULT_TASK_TIMEOUT_MS = 5 * 60_000;

/** The failure recorded for a run that outlived its task's `timeoutMs`. */
export class TaskTimeoutError extends Error {
  constructor(readonly task: string, readonly timeoutMs: number) {
    super(`task "${task}" did not finish within ${timeoutMs} ms`);
    this.name = "TaskTimeoutError";
  }
}

/**
 * The handler's promise, or a TaskTimeoutError after `timeoutMs`. The handler is not stopped
 * (JavaScript cannot stop it): its promise is abandoned, and what it does later is ignored.
 */
export function withTimeout<T>(work: Promise<T>, task: string, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TaskTimeoutError(task, timeoutMs)), timeoutMs);
    // A hung handler must not keep a stopping process alive for minutes.
    timer.unref();
    // Once timed out, the abandoned handler's late result or failure settles nothing.
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
