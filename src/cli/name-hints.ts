import type { HistoryStore } from "../store/history";
import type { Store } from "../store/store";
import { didYouMean } from "../util/did-you-mean";
import type { TaskQueues } from "./app-store";

/** How many of the latest events are looked at for the tasks they were handed to (as sourceHint does for sources). */
const LOOKED_AT = 500;

/**
 * When `--task` matched nothing: the app's tasks, if the name is not one of them; with
 * `--store` (no app read), the tasks the latest events were handed to. Undefined when the task
 * is known (its events are just outside the other filters) or there is nothing to name.
 */
export async function taskHint(history: Pick<HistoryStore, "list">, task: string, tasks: readonly TaskQueues[] | undefined): Promise<string | undefined> {
  if (tasks !== undefined) {
    const names = tasks.map((t) => t.name);
    if (names.includes(task)) return undefined;
    return `this app has no task "${task}"${guessOf(task, names)}; its tasks: ${names.join(", ") || "none"}`;
  }
  const page = await history.list({ limit: LOOKED_AT });
  const seen = [...new Set(page.events.flatMap((e) => e.deliveries.map((d) => d.task)))].sort();
  if (seen.length === 0 || seen.includes(task)) return undefined;
  return `no event was handed to a task "${task}"${guessOf(task, seen)}; the latest events were handed to: ${seen.join(", ")}`;
}

/**
 * When `--queue` matched no dead letter: the queues known, if the name is not one of them. With
 * the app, its tasks' queues and those the store holds; with `--store`, those the store holds (a
 * message or a dead letter: it keeps no list of empty queues). A task's name given for its queue
 * (`receive` for `webhook:receive`) is pointed at the queue. Undefined when the queue is known or
 * there is nothing to name.
 */
export async function queueHint(store: Pick<Store, "queueNames">, queue: string, tasks: readonly TaskQueues[] | undefined): Promise<string | undefined> {
  const known = [...new Set([...(tasks ?? []).map((t) => t.queue), ...(await store.queueNames())])];
  if (known.includes(queue)) return undefined;
  const owner = tasks?.find((t) => t.name === queue);
  const guess = owner !== undefined ? ` (task "${queue}" reads queue "${owner.queue}")` : guessOf(queue, known);
  if (tasks !== undefined) return `this app has no queue "${queue}"${guess}; its queues: ${known.join(", ") || "none"}`;
  if (known.length === 0) return undefined;
  return `the store holds nothing in a queue "${queue}"${guess}; the queues holding messages or dead letters: ${known.join(", ")}`;
}

function guessOf(name: string, known: readonly string[]): string {
  const guess = didYouMean(name, known);
  return guess === undefined ? "" : ` (did you mean "${guess}"?)`;
}
