import type { Readiness } from "../observe/health";
import type { QueueStats, Store } from "../store/store";
import type { RegisteredTask } from "./task-registry";

/** One queue as `app.status()` and `webhook-tasks status` show it. */
export interface QueueStatus {
  readonly queue: string;
  /** Messages waiting (retries included) plus in flight. */
  readonly depth: number;
  readonly waiting: number;
  readonly inFlight: number;
  /** Seconds since the oldest message still in the queue entered it; 0 when empty. */
  readonly oldestAgeSeconds: number;
  readonly deadLetters: number;
  /** Of `waiting`: retries and delayed messages not yet due. */
  readonly delayed: number;
  /** Of `waiting`: due messages held back by the task's concurrency or rate limit (waiting, not failing). */
  readonly limited: number;
  /** Of `waiting`: events collecting in a debounce or batch that is not due yet (waiting, not failing). */
  readonly collecting: number;
  /**
   * The task that consumes the queue, if any. A queue no task consumes any more (the queue a
   * named queue had before it got a second consumer, or one consumer's queue after the others
   * were removed) is listed only while it holds messages, with none.
   */
  readonly consumer: string | undefined;
  /** Tasks that emit into it (into the named queue it gets its copies of). */
  readonly producers: readonly string[];
}

export interface TaskStatus {
  readonly name: string;
  /** Its physical queue (see QueueStatus.queue). */
  readonly queue: string;
  readonly emit: string | undefined;
}

export interface AppStatus {
  readonly app: string;
  /** Readiness as /readyz answers it (the CLI, which does not run the app, leaves it out). */
  readonly readiness?: Readiness;
  readonly queues: readonly QueueStatus[];
  readonly tasks: readonly TaskStatus[];
}

type TaskShape = Pick<RegisteredTask, "name" | "queue" | "emit"> & { readonly input?: string | undefined };

/**
 * Every queue the tasks consume or emit to, with its figures from the store (zeros when the
 * store is not open), and the queues left behind by a change of consumers while they hold messages.
 */
export async function appStatus(
  app: string,
  tasks: readonly TaskShape[],
  store: Store | undefined,
  readiness?: Readiness,
  statsOf: (queue: string) => Promise<QueueStats & { readonly limited?: number; readonly collecting?: number }> = (queue) => store!.stats(queue),
): Promise<AppStatus> {
  const consumed = new Set(tasks.map((t) => t.input));
  const names = [...new Set(tasks.flatMap((t) => [t.queue, ...(t.emit !== undefined && !consumed.has(t.emit) ? [t.emit] : [])]))];
  // Queues the store holds that no task reads any more (a consumer added or removed, a task renamed).
  const leftovers = new Set(store === undefined ? [] : (await store.queueNames()).filter((q) => !names.includes(q)));
  const now = Date.now();
  const listed = await Promise.all(
    [...names, ...leftovers].map(async (queue): Promise<QueueStatus> => {
      const stats = store === undefined ? undefined : await statsOf(queue);
      const waiting = stats?.waiting ?? 0;
      const inFlight = stats?.inFlight ?? 0;
      return {
        queue,
        depth: waiting + inFlight,
        waiting,
        inFlight,
        oldestAgeSeconds: stats?.oldestEnqueuedAt === undefined ? 0 : Math.max(0, (now - stats.oldestEnqueuedAt) / 1000),
        deadLetters: stats?.deadLetters ?? 0,
        delayed: stats?.delayed ?? 0,
        limited: stats?.limited ?? 0,
        collecting: stats?.collecting ?? 0,
        consumer: tasks.find((t) => t.queue === queue)?.name,
        producers: tasks.filter((t) => t.emit !== undefined && t.emit === (tasks.find((c) => c.queue === queue)?.input ?? queue)).map((t) => t.name),
      };
    }),
  );
  const queues = listed.filter((q) => !leftovers.has(q.queue) || q.depth > 0 || q.deadLetters > 0);
  const status = { app, queues, tasks: tasks.map((t) => ({ name: t.name, queue: t.queue, emit: t.emit })) };
  return readiness === undefined ? status : { ...status, readiness };
}
