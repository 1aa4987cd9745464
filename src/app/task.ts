import type { Source } from "../sources/source";
import type { Queue } from "./queue";
import type { RetryPolicy } from "./retry-policy";
import type { TaskContext } from "./task-context";

/** A task's input: a push source (a WebhookSource), a typed Queue, or the name of a queue. */
export type TaskSource = Source | Queue<unknown> | string;

/** Where a task's return value goes: a typed Queue (checked against `R`) or a queue name. */
export type TaskEmit<R = unknown> = Queue<R> | string;

/** What a handler may return: the value to emit, or nothing (nothing is emitted). */
export type TaskResult<R> = R | undefined | void;

/** A task's function: `(ctx, event) => result`. `E` is the event (or emitted value) it takes. */
export type TaskHandler<E = unknown, R = unknown> = (ctx: TaskContext, event: E) => TaskResult<R> | Promise<TaskResult<R>>;

export interface TaskOptions<S extends TaskSource = TaskSource, R = unknown> {
  source: S;
  /** Queue that receives the task's return value (undefined results are not sent). */
  emit?: TaskEmit<R>;
  /**
   * Unique name; queued work and dead letters are keyed by it, so keep it stable. Default:
   * the handler's function name; for an anonymous function, the queue's name or the
   * webhook's path without its leading "/" ("/hooks/github" gives "hooks/github").
   */
  name?: string;
  /** Events handled at once (default 16). */
  concurrency?: number;
  retry?: Partial<RetryPolicy>;
}
