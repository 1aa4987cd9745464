import { isSource, type Source } from "../sources/source";
import type { StateStore } from "../store/store";
import type { Logger } from "../util/logger";
import { resolveRetry, type RetryPolicy } from "./retry-policy";
import { isQueue, queueName } from "./queue";
import type { TaskHandler, TaskOptions, TaskSource } from "./task";
import { computeOrderingKey, type OrderingKeyFn } from "./ordering-key";
import { DEFAULT_TASK_TIMEOUT_MS } from "./task-timeout";
import { taskMatcher } from "./task-match";

export const DEFAULT_CONCURRENCY = 16;

/** A task as the runner sees it: options validated, queue named, handler bound. */
export interface RegisteredTask {
  readonly name: string;
  readonly source: Source | undefined;
  /** Queue the task consumes: the named queue, or its push source's inbox. */
  readonly queue: string;
  readonly emit: string | undefined;
  readonly handler: TaskHandler<unknown, unknown>;
  readonly concurrency: number;
  readonly retry: RetryPolicy;
  /** Key function of the messages entering the task's queue (TaskOptions.orderingKey). */
  readonly orderingKey: OrderingKeyFn<never> | undefined;
  /** Milliseconds a run may take before it counts as failed (outcome "timeout"). */
  readonly timeoutMs: number;
  /** Whether the task takes an event (its `on` and `filter`); undefined: every event. */
  readonly accepts: ((event: unknown) => boolean) | undefined;
  /** Set when the app starts. */
  state: StateStore;
  logger: Logger;
}

const QUEUE_NAME = /^[A-Za-z0-9_.:\-/]{1,200}$/;
const TASK_NAME = QUEUE_NAME;

/** Tasks of one app; checks names, queues and sources once, when they are added. */
export class TaskRegistry {
  private readonly tasks = new Map<string, RegisteredTask>();

  add(options: TaskOptions<TaskSource, unknown, never>, handler: TaskHandler<never, unknown>, placeholder: { state: StateStore; logger: Logger }): RegisteredTask {
    if (typeof options !== "object" || options === null) throw new TypeError("task: options { source, emit? } are required");
    if (typeof handler !== "function") throw new TypeError("task: the handler must be a function (ctx, event) => result");
    // Explicit name, else the function's name (as before), else one derived from the source:
    // all three are stable across restarts, which durable queues and dead letters rely on.
    const derived = options.name === undefined && !handler.name ? defaultTaskName(options.source) : undefined;
    const name = options.name ?? (handler.name || derived);
    if (typeof name !== "string" || name.length === 0) throw new TypeError("task: give the task a name (options.name) or use a named function");
    const where = `task "${name}"`;
    if (!TASK_NAME.test(name)) throw new TypeError(`${where}: a task name is 1-200 letters, digits or _ . : - / (it names the task's queue in the store)`);
    if (this.tasks.has(name)) {
      const why = derived !== undefined ? ", the name this task's source gives it" : "";
      throw new Error(`${where}: a task with this name exists already${why}; task names must be unique: give this task a name ({ name: "..." })`);
    }
    const source = isQueue(options.source) ? queueName(options.source) : options.source;
    const emit = isQueue(options.emit) ? queueName(options.emit) : options.emit;
    let queue: string;
    if (typeof source === "string") {
      checkQueueName(source, `${where}: source`);
      queue = source;
    } else if (isSource(source)) {
      queue = `${source.kind}:${name}`;
    } else {
      throw new TypeError(`${where}: source must be a WebhookSource (or another Source) or the name of a queue`);
    }
    if (emit !== undefined) checkQueueName(emit, `${where}: emit`);
    for (const other of this.tasks.values()) {
      if (other.queue === queue) throw new Error(`${where}: queue "${queue}" is consumed by task "${other.name}" already; a queue feeds one task`);
      if (other.source !== undefined && other.source === source) throw new Error(`${where}: ${other.source.describe()} feeds task "${other.name}" already; a source feeds one task`);
    }
    const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError(`${where}: concurrency must be an integer >= 1`);
    const orderingKey = options.orderingKey;
    if (orderingKey !== undefined && typeof orderingKey !== "function") throw new TypeError(`${where}: orderingKey must be a function (event) => string | undefined`);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TASK_TIMEOUT_MS;
    if (typeof timeoutMs !== "number" || !(timeoutMs > 0) || timeoutMs > 2 ** 31 - 1) throw new TypeError(`${where}: timeoutMs must be a positive number of milliseconds (at most 2147483647)`);
    const task: RegisteredTask = {
      name,
      source: typeof source === "string" ? undefined : source,
      queue,
      emit,
      handler: handler as TaskHandler<unknown, unknown>,
      concurrency,
      retry: resolveRetry(options.retry, where),
      orderingKey,
      timeoutMs,
      accepts: taskMatcher(options, where),
      state: placeholder.state,
      logger: placeholder.logger,
    };
    this.tasks.set(name, task);
    return task;
  }

  all(): RegisteredTask[] {
    return [...this.tasks.values()];
  }

  get(name: string): RegisteredTask | undefined {
    return this.tasks.get(name);
  }

  /**
   * Ordering key of a value entering `queue`, by the key function of the task consuming it (a
   * queue feeds one task); undefined when that task has none. Throws OrderingKeyError.
   */
  keyFor(queue: string, value: unknown): string | undefined {
    for (const task of this.tasks.values()) {
      if (task.queue === queue) return task.orderingKey && computeOrderingKey(task.orderingKey, value, task.name);
    }
    return undefined;
  }

  /** Emit queues no task consumes: their messages would only pile up. */
  unconsumedEmits(): Array<{ task: string; queue: string }> {
    const consumed = new Set(this.all().map((t) => t.queue));
    return this.all()
      .filter((t) => t.emit !== undefined && !consumed.has(t.emit))
      .map((t) => ({ task: t.name, queue: t.emit! }));
  }
}

/** A name from the source: its queue's name, or what the source proposes (a webhook's path). */
function defaultTaskName(source: unknown): string | undefined {
  if (isQueue(source)) return queueName(source);
  if (typeof source === "string") return source;
  if (isSource(source)) return source.defaultTaskName;
  return undefined;
}

function checkQueueName(name: unknown, where: string): void {
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
    throw new TypeError(`${where} must be a queue name of 1-200 letters, digits or _ . : - /`);
  }
}
