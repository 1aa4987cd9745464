import type { Source } from "../sources/source";
import type { WebhookEvent } from "../sources/webhook/webhook-event";
import type { Queue } from "./queue";
import type { RetryPolicy } from "./retry-policy";
import type { TaskContext } from "./task-context";
import type { EventSelector } from "../sources/webhook/event-names/event-types";
import type { ConcurrencyLimit, RateLimit } from "./flow/flow-options";
import type { BatchOptions, DebounceOptions } from "./flow/group-options";

/** A task's input: a push source (a WebhookSource), a typed Queue, or the name of a queue. */
export type TaskSource = Source | Queue<unknown> | string;

/** Where a task's return value goes: a typed Queue (checked against `R`) or a queue name. */
export type TaskEmit<R = unknown> = Queue<R> | string;

/** What a handler may return: the value to emit, or nothing (nothing is emitted). */
export type TaskResult<R> = R | undefined | void;

/** A task's function: `(ctx, event) => result`. `E` is the event (or emitted value) it takes. */
export type TaskHandler<E = unknown, R = unknown> = (ctx: TaskContext, event: E) => TaskResult<R> | Promise<TaskResult<R>>;

/** The event a task receives from its source: `T` for a `Queue<T>`, a WebhookEvent for a webhook, unknown for a queue name. */
export type EventOf<S> = S extends Queue<infer T> ? T : S extends string ? unknown : WebhookEvent;

/** `S` is the source, `R` what the handler returns, `E` the event it takes (for `orderingKey`). */
export interface TaskOptions<S extends TaskSource = TaskSource, R = unknown, E = EventOf<S>> {
  source: S;
  /** Queue that receives the task's return value (undefined results are not sent). */
  emit?: TaskEmit<R>;
  /**
   * Unique name; queued work and dead letters are keyed by it, so keep it stable. Default:
   * the handler's function name; for an anonymous function, the queue's name or the
   * webhook's path without its leading "/" ("/hooks/github" gives "hooks/github").
   */
  name?: string;
  /**
   * A number: events handled at once by this process (default 16). `{ limit, key? }`: at most
   * `limit` runs at once per value of `key(event)` (without `key`: for the task as a whole),
   * counted across every replica sharing the store. See docs/flow-control.md.
   */
  concurrency?: number | ConcurrencyLimit<E>;
  /** At most `limit` runs started per `periodMs` per key, across replicas; the rest wait. See docs/flow-control.md. */
  rateLimit?: RateLimit<E>;
  /**
   * A burst of events with one key runs the task once, `periodMs` after its last event (or
   * `maxWaitMs` after its first): `event` is the newest, `ctx.batch` holds them all, oldest
   * first. The others are noted "superseded" in the history. See docs/flow-control.md.
   */
  debounce?: DebounceOptions<E>;
  /**
   * The handler receives up to `maxSize` events at once, as an array (oldest first), once the
   * batch is full or `maxWaitMs` after its first event. See docs/flow-control.md.
   */
  batch?: BatchOptions<E>;
  retry?: Partial<RetryPolicy>;
  /**
   * Messages with the same key are handed to the task one at a time, in the order they entered
   * its queue; other keys run in parallel. Computed when a message enters the queue; return
   * undefined for a message that needs no order. See docs/ordering.md.
   */
  orderingKey?: (event: E) => string | undefined;
  /**
   * A run still going after this many milliseconds counts as failed (outcome "timeout": retried,
   * then dead-lettered) and its slot is freed; the handler's promise is abandoned, not stopped.
   * Default 5 minutes.
   */
  timeoutMs?: number;
  /**
   * Event names this task takes ("pull_request.opened", "invoice.*", "*"), as the source's
   * sender names them (`event.name`); checked against the sender's names when they are known.
   */
  on?: EventSelector<S>;
  /**
   * Takes the event only when this returns true (after `on`): decided once, when it arrives,
   * before it is stored; a task that says no gets no copy. Synchronous; a filter that throws
   * refuses the webhook with 500 `filter_failed` and stores nothing (the sender sends it again).
   */
  filter?: (event: E) => boolean;
}
