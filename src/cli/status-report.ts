import type { Store } from "../store/store";
import type { TaskQueues } from "./app-store";

/**
 * One queue in `status --json`. `consumer` and `producers` are null when unknown (`--store`
 * reads no app); with an app, `consumer` null means no task of the app consumes the queue.
 */
export interface QueueReport {
  readonly queue: string;
  /** waiting + inFlight. */
  readonly depth: number;
  /** Messages waiting to be handed out, delayed retries included. */
  readonly waiting: number;
  readonly inFlight: number;
  /** Seconds since the oldest message still in the queue entered it; 0 when empty. */
  readonly oldestAgeSeconds: number;
  readonly deadLetters: number;
  /** Of `waiting`: retries and delayed messages not yet due. */
  readonly delayed: number;
  /** Of `waiting`: due messages held back by the consumer's concurrency or rate limit (counted on PostgreSQL; 0 elsewhere, where only the running app holds them back). */
  readonly limited: number;
  /**
   * Of `waiting`: messages of a debounced or batched consumer that are not delayed; they collect
   * in groups (the running app, which knows which groups are due, counts exactly those not due).
   */
  readonly collecting: number;
  readonly consumer: string | null;
  readonly producers: readonly string[] | null;
}

/** What `status --json` prints: a stable shape, documented in docs/yaml-and-cli.md. */
export interface StatusReport {
  /** The app's name; null with `--store`. */
  readonly app: string | null;
  /** The store read: its engine, and its directory or URL (without a password). */
  readonly store: { readonly engine: string; readonly location: string };
  /** The app's queues first (in task order), then any other queue holding a message or a dead letter (the store keeps no list of empty ones). */
  readonly queues: readonly QueueReport[];
  /** The app's tasks; null with `--store`. */
  readonly tasks: ReadonlyArray<{ readonly name: string; readonly queue: string; readonly emit: string | null }> | null;
  /** Tasks paused (`app.pause`, the console): their queues grow and none of their events runs until resumed. */
  readonly paused: readonly string[];
}

/**
 * Per queue, the store's figures and, when the app is known, which of its tasks consume and
 * feed it. Queues the store holds that no task names (a task renamed or removed, with dead
 * letters left) are listed too: the dead-letter counts then add up to `dead-letters list`.
 */
export async function statusReport(app: string | undefined, tasks: readonly TaskQueues[] | undefined, store: Store, location: string): Promise<StatusReport> {
  // A named queue with several consumers is each consumer's `<queue>@<task>`; its own name is listed only if the store holds it.
  const consumed = new Set(tasks?.map((t) => t.input));
  const named = tasks === undefined ? [] : tasks.flatMap((t) => (t.emit === undefined || consumed.has(t.emit) ? [t.queue] : [t.queue, t.emit]));
  const names = [...new Set([...named, ...(await store.queueNames())])];
  const now = Date.now();
  const queues = await Promise.all(
    names.map(async (queue): Promise<QueueReport> => {
      const stats = await store.stats(queue);
      const task = tasks?.find((t) => t.queue === queue);
      const flow = task?.flow;
      const limited = flow !== undefined && store.enforcesFlow && store.limitedCount !== undefined ? await store.limitedCount(queue, flow) : 0;
      return {
        queue,
        depth: stats.waiting + stats.inFlight,
        waiting: stats.waiting,
        inFlight: stats.inFlight,
        oldestAgeSeconds: stats.oldestEnqueuedAt === undefined ? 0 : Math.max(0, (now - stats.oldestEnqueuedAt) / 1000),
        deadLetters: stats.deadLetters,
        delayed: stats.delayed ?? 0,
        limited,
        collecting: task?.grouped === true ? Math.max(0, stats.waiting - (stats.delayed ?? 0)) : 0,
        consumer: tasks === undefined ? null : (tasks.find((t) => t.queue === queue)?.name ?? null),
        producers: tasks === undefined ? null : producersOf(tasks, queue),
      };
    }),
  );
  return {
    app: app ?? null,
    store: { engine: store.engine, location },
    queues,
    tasks: tasks === undefined ? null : tasks.map((t) => ({ name: t.name, queue: t.queue, emit: t.emit ?? null })),
    paused: store.pauses === undefined ? [] : [...(await store.pauses.paused())].sort(),
  };
}

/** Tasks emitting into `queue`, or into the named queue it is one consumer's copy of. */
function producersOf(tasks: readonly TaskQueues[], queue: string): string[] {
  const named = tasks.find((t) => t.queue === queue)?.input ?? queue;
  return tasks.filter((t) => t.emit === named).map((t) => t.name);
}
