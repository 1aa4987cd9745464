import type { Readiness } from "../observe/health";
import type { Store } from "../store/store";
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
  /** The task that consumes the queue, if any. */
  readonly consumer: string | undefined;
  /** Tasks that emit into it. */
  readonly producers: readonly string[];
}

export interface TaskStatus {
  readonly name: string;
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

type TaskShape = Pick<RegisteredTask, "name" | "queue" | "emit">;

/** Every queue the tasks consume or emit to, with its figures from the store (zeros when the store is not open). */
export async function appStatus(app: string, tasks: readonly TaskShape[], store: Store | undefined, readiness?: Readiness): Promise<AppStatus> {
  const names = [...new Set(tasks.flatMap((t) => (t.emit === undefined ? [t.queue] : [t.queue, t.emit])))];
  const now = Date.now();
  const queues = await Promise.all(
    names.map(async (queue): Promise<QueueStatus> => {
      const stats = store === undefined ? undefined : await store.stats(queue);
      const waiting = stats?.waiting ?? 0;
      const inFlight = stats?.inFlight ?? 0;
      return {
        queue,
        depth: waiting + inFlight,
        waiting,
        inFlight,
        oldestAgeSeconds: stats?.oldestEnqueuedAt === undefined ? 0 : Math.max(0, (now - stats.oldestEnqueuedAt) / 1000),
        deadLetters: stats?.deadLetters ?? 0,
        consumer: tasks.find((t) => t.queue === queue)?.name,
        producers: tasks.filter((t) => t.emit === queue).map((t) => t.name),
      };
    }),
  );
  const status = { app, queues, tasks: tasks.map((t) => ({ name: t.name, queue: t.queue, emit: t.emit })) };
  return readiness === undefined ? status : { ...status, readiness };
}
