import type { Store } from "../store/store";
import { errorMessage, type Logger } from "../util/logger";
import type { RegisteredTask } from "./task-registry";

type TaskQueues = Pick<RegisteredTask, "queue" | "emit" | "input">;

/** The queues this app reads or fills: its tasks' queues, and emit queues no task consumes. */
export function queuesOfApp(tasks: readonly TaskQueues[]): Set<string> {
  const consumed = new Set(tasks.map((t) => t.input));
  return new Set(tasks.flatMap((t) => [t.queue, ...(t.emit !== undefined && !consumed.has(t.emit) ? [t.emit] : [])]));
}

/**
 * Warns, once after start, of every queue in the store that holds messages no task of this app
 * reads. A task renamed (an anonymous handler given a name, a class renamed) or a named queue
 * given a second consumer strands what waited under the old name; the app would otherwise start
 * without a word, and the events look lost until someone runs `webhook-tasks status`.
 * Runs in the background: listing queues reads every dead letter on the embedded store.
 */
export async function warnLeftBehind(store: Store, own: ReadonlySet<string>, logger: Logger): Promise<void> {
  try {
    for (const queue of await store.queueNames()) {
      if (own.has(queue)) continue;
      const stats = await store.stats(queue);
      const messages = stats.waiting + stats.inFlight;
      if (messages === 0) continue; // dead letters alone: `dead-letters list` shows them
      const former = formerTask(queue);
      const advice = former === undefined
        ? "its consumers now read their own <queue>@<task> queues; replay or move what waits there"
        : `name a task "${former}" again to run them`;
      logger.warn(
        { queue, messages, deadLetters: stats.deadLetters, ...(former === undefined ? {} : { formerTask: former }) },
        `queue "${queue}" holds ${messages} message${messages === 1 ? "" : "s"} that no task of this app consumes (a task renamed or removed, or a consumer added, leaves its queue behind): ${advice}; webhook-tasks status lists it`,
      );
    }
  } catch (error) {
    // A stop while this runs closes the store under it: nothing to warn about then.
    logger.debug({ error: errorMessage(error) }, "could not look for queues left behind");
  }
}

/** The task that read `queue`: `webhook:<task>`, or `<queue>@<task>` of several consumers. */
function formerTask(queue: string): string | undefined {
  if (queue.startsWith("webhook:")) return queue.slice("webhook:".length);
  const at = queue.lastIndexOf("@");
  return at > 0 ? queue.slice(at + 1) : undefined;
}
