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
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TaskTimeoutError(task, timeoutMs)), timeoutMs);
    // A hung handler must not keep a stopping process alive for minutes.
    timer.unref();
  });
  // An abandoned handler that fails later must not become an unhandled rejection.
  work.catch(() => undefined);
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
