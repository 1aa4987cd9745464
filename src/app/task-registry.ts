import { isSource, type Source } from "../sources/source";
import type { StateStore } from "../store/store";
import type { Logger } from "../util/logger";
import { resolveRetry, type RetryPolicy } from "./retry-policy";
import { isQueue, queueName } from "./queue";
import type { TaskHandler, TaskOptions, TaskSource } from "./task";
import type { OrderingKeyFn } from "./ordering-key";
import { DEFAULT_TASK_TIMEOUT_MS } from "./task-timeout";
import { taskMatcher } from "./task-match";
import { fanOut } from "./fan-out";
import type { EmitRecord, QueuedMessage } from "../store/store";
import { resolveFlow, type TaskFlow } from "./flow/flow-options";
import { resolveGroup, type TaskGroup } from "./flow/group-options";

export const DEFAULT_CONCURRENCY = 16;

/** A task as the runner sees it: options validated, queue named, handler bound. */
export interface RegisteredTask {
  readonly name: string;
  readonly source: Source | undefined;
  /**
   * The task's physical queue in the store: `webhook:<task>` for a webhook task; for a named
   * queue, the queue's name while one task consumes it, `<queue>@<task>` for each of several.
   * Set by the registry (a second consumer renames the first's).
   */
  queue: string;
  /** The named queue the task consumes (undefined for a task on a push source). */
  readonly input: string | undefined;
  readonly emit: string | undefined;
  readonly handler: TaskHandler<unknown, unknown>;
  /** Runs at once in this process. */
  readonly concurrency: number;
  /** Limits shared across processes (concurrency per key, rate), when the task has any. */
  readonly flow: TaskFlow | undefined;
  /** Debounce or batch: the task's runs take groups of messages (group-runner.ts). */
  readonly group: TaskGroup | undefined;
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
  /** consumersOf per named queue, for copiesFor (every emitted value): tasks are only added before start. */
  private readonly consumerCache = new Map<string, RegisteredTask[]>();

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
    const group = resolveGroup(options.debounce, options.batch, options, where);
    const { perProcess: concurrency, flow } = resolveFlow(options.concurrency, options.rateLimit, where, DEFAULT_CONCURRENCY);
    const orderingKey = options.orderingKey;
    if (orderingKey !== undefined && typeof orderingKey !== "function") throw new TypeError(`${where}: orderingKey must be a function (event) => string | undefined`);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TASK_TIMEOUT_MS;
    if (typeof timeoutMs !== "number" || !(timeoutMs > 0) || timeoutMs > 2 ** 31 - 1) throw new TypeError(`${where}: timeoutMs must be a positive number of milliseconds (at most 2147483647)`);
    const task: RegisteredTask = {
      name,
      source: typeof source === "string" ? undefined : source,
      queue,
      input: typeof source === "string" ? source : undefined,
      emit,
      handler: handler as TaskHandler<unknown, unknown>,
      concurrency,
      flow,
      group,
      retry: resolveRetry(options.retry, where),
      orderingKey,
      timeoutMs,
      accepts: taskMatcher(options, where),
      state: placeholder.state,
      logger: placeholder.logger,
    };
    if (task.input !== undefined) {
      // Several consumers: each gets its own copy, in its own physical queue.
      const others = this.consumersOf(task.input);
      if (others.length > 0) {
        for (const other of others) other.queue = consumerQueue(task.input, other.name);
        task.queue = consumerQueue(task.input, name);
      }
    }
    this.tasks.set(name, task);
    this.consumerCache.clear();
    return task;
  }

  /** The tasks consuming the named queue `queue`, in the order they were added. */
  consumersOf(queue: string): RegisteredTask[] {
    return this.all().filter((t) => t.input === queue);
  }

  /** The tasks `source` feeds, in the order they were added. */
  subscribersOf(source: Source): RegisteredTask[] {
    return this.all().filter((t) => t.source === source);
  }

  /** Every push source, once, in the order of its first task. */
  sources(): Source[] {
    return [...new Set(this.all().flatMap((t) => (t.source === undefined ? [] : [t.source])))];
  }

  /**
   * The copies of a value emitted to the named queue `queue`: one per consuming task whose
   * filter takes it, each with its task's ordering key; the queue itself when no task consumes
   * it (the value waits there). Throws FilterError or OrderingKeyError.
   */
  copiesFor(queue: string, message: QueuedMessage): EmitRecord[] {
    let consumers = this.consumerCache.get(queue);
    if (consumers === undefined) this.consumerCache.set(queue, (consumers = this.consumersOf(queue)));
    if (consumers.length === 0) return [{ queue, message }];
    return fanOut(consumers, message);
  }

  all(): RegisteredTask[] {
    return [...this.tasks.values()];
  }

  get(name: string): RegisteredTask | undefined {
    return this.tasks.get(name);
  }

  /** Every physical queue: each task's, and each emit queue no task consumes (its messages wait there). */
  queues(): string[] {
    const consumed = new Set(this.all().map((t) => t.input));
    return [...new Set(this.all().flatMap((t) => [t.queue, ...(t.emit !== undefined && !consumed.has(t.emit) ? [t.emit] : [])]))];
  }

  /** Emit queues no task consumes: their messages would only pile up. */
  unconsumedEmits(): Array<{ task: string; queue: string }> {
    const consumed = new Set(this.all().map((t) => t.input));
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

/** The physical queue of `task`, one of several consumers of the named queue `queue` ("@" is in no queue name). */
export function consumerQueue(queue: string, task: string): string {
  return `${queue}@${task}`;
}

function checkQueueName(name: unknown, where: string): void {
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
    throw new TypeError(`${where} must be a queue name of 1-200 letters, digits or _ . : - /`);
  }
}
