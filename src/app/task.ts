import type { Source } from "../sources/source";
import type { RetryPolicy } from "./retry-policy";
import type { TaskContext } from "./task-context";

/** A task's input: a push source (a WebhookSource) or the name of a queue another task emits to. */
export type TaskSource = Source | string;

/** A task's function: `(ctx, event) => result`. `E` is the event (or emitted value) it takes. */
export type TaskHandler<E = unknown, R = unknown> = (ctx: TaskContext, event: E) => R | Promise<R>;

/** `E` is the task's event type (a WebhookEvent for a webhook source, the emitted value for a queue). */
export interface TaskOptions<E = unknown> {
  source: TaskSource;
  /** Queue that receives the task's return value (undefined results are not sent). */
  emit?: string;
  /** Unique name; defaults to the handler's name. Queued work is keyed by it, so keep it stable. */
  name?: string;
  /** Events handled at once (default 16). */
  concurrency?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * Messages with the same key are handed to the task one at a time, in the order they entered
   * its queue; other keys run in parallel. Computed when a message enters the queue; return
   * undefined for a message that needs no order. See docs/ordering.md.
   */
  orderingKey?: (event: E) => string | undefined;
}
