import type { Source } from "../sources/source";
import type { RetryPolicy } from "./retry-policy";
import type { TaskContext } from "./task-context";

/** A task's input: a push source (a WebhookSource) or the name of a queue another task emits to. */
export type TaskSource = Source | string;

/** A task's function: `(ctx, event) => result`. `E` is the event (or emitted value) it takes. */
export type TaskHandler<E = unknown, R = unknown> = (ctx: TaskContext, event: E) => R | Promise<R>;

export interface TaskOptions {
  source: TaskSource;
  /** Queue that receives the task's return value (undefined results are not sent). */
  emit?: string;
  /** Unique name; defaults to the handler's name. Queued work is keyed by it, so keep it stable. */
  name?: string;
  /** Events handled at once (default 16). */
  concurrency?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * A run still going after this many milliseconds counts as failed (outcome "timeout": retried,
   * then dead-lettered) and its slot is freed; the handler's promise is abandoned, not stopped.
   * Default 5 minutes.
   */
  timeoutMs?: number;
}
