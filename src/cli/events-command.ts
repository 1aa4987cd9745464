import { DEFAULT_REPLAY_RATE, queueReplay, recordedTargets, replayEach, ReplayError, withHeldDeadLetters, type ReplayCopyTarget } from "../app/event-replay";
import type { EventStatus, HistoryEvent } from "../store/history";
import type { HistoryStore } from "../store/history";
import { HistoryQueryError } from "../store/history-query";
import type { Store } from "../store/store";
import { targetOf } from "./app-argument";
import { openAppStore, storeLocation, type AppStoreTarget, type TaskQueues } from "./app-store";
import { parseEventsArgs, type EventsRequest } from "./events-args";
import { taskHint } from "./name-hints";
import { sourceHint } from "./source-hint";
import { withFlows } from "./replay-flows";
import { eventDetails, eventJson, eventsTable, summaryJson } from "./events-print";
import type { Output } from "./output";
import { UsageError } from "./usage";

/**
 * `events list|show|replay`: the event history of an app (or of a store named with --store),
 * read from its store without the app running or its code imported (with --store), and
 * replays queued straight into the store's queues, which the app's tasks take when it runs.
 */
export async function eventsCommand(args: readonly string[], output: Output): Promise<number> {
  const request = parseEventsArgs(args);
  const target = await targetOf(request.app);
  refuseWithoutHistory(target);
  const store = await openAppStore(target);
  try {
    return await operate(store, historyOf(store, target), request, output, target.tasks);
  } finally {
    await store.close();
  }
}

/** The open store's history; an engine that keeps none is refused, naming it. */
export function historyOf(store: Pick<Store, "engine" | "history">, target: AppStoreTarget): HistoryStore {
  if (store.history === undefined) throw new Error(`${target.label}: its ${store.engine} store at ${storeLocation(target)} keeps no event history`);
  return store.history;
}

/** Before opening anything: a memory store's history is in its process, and an app may have turned it off. */
export function refuseWithoutHistory(target: AppStoreTarget): void {
  if (target.store === "memory") {
    throw new Error(`${target.label} uses the memory store: its event history lives only inside the running process; read it there with app.events, or use a durable store (store: embedded, or a postgres:// URL)`);
  }
  if (target.historyOff === true) {
    throw new Error(`${target.label} has its event history off (history: false): no event is kept to list, show or replay; turn it on to keep them`);
  }
}

/**
 * Carries out a request on an open store's history; returns the exit code. `tasks`: the app's
 * tasks when the app is known (not with --store): replays go only to those it still has.
 */
export async function operate(store: Store, history: HistoryStore, request: EventsRequest, output: Output, tasks?: readonly TaskQueues[]): Promise<number> {
  try {
    return await carryOut(store, history, request, output, tasks);
  } catch (error) {
    // A value the history refuses is the command line's fault.
    if (error instanceof HistoryQueryError) throw new UsageError(error.message);
    throw error;
  }
}

async function carryOut(store: Store, history: HistoryStore, request: EventsRequest, output: Output, tasks: readonly TaskQueues[] | undefined): Promise<number> {
  switch (request.action) {
    case "list": {
      const page = await history.list(request.query);
      if (request.json) output.out(JSON.stringify({ events: page.events.map(summaryJson), ...(page.next === undefined ? {} : { next: page.next }) }, null, 2));
      else for (const line of eventsTable(page)) output.out(line);
      if (page.events.length === 0 && request.query.cursor === undefined) await hintNames(history, request.query, tasks, output);
      return 0;
    }
    case "show": {
      const event = await history.get(request.id);
      if (event === undefined) return notFound(request.id, output);
      if (request.json) output.out(JSON.stringify(eventJson(event), null, 2));
      else for (const line of eventDetails(event)) output.out(line);
      return 0;
    }
    case "replay": {
      const event = await history.get(request.id);
      if (event === undefined) return notFound(request.id, output);
      // The tasks as the history recorded them: no app code is needed to know their queues.
      const result = await queueReplay(store, history, event, await replayTargets(store, history, event, request.task, tasks));
      await history.flush();
      if (request.json) output.out(JSON.stringify(result));
      else output.out(`replayed ${result.replayOf} as ${result.id} for ${plural(result.tasks.length, "task")} ${result.tasks.join(", ")} (run when the app runs)`);
      return 0;
    }
    case "bulk-replay": {
      const rate = request.ratePerSecond ?? DEFAULT_REPLAY_RATE;
      const { task } = request;
      // --task names the events' task, and so narrows the filter; unrouted events have none: it only names where they go.
      const { task: _target, ...untasked } = request.filter;
      const query = request.filter.status === "unrouted" ? untasked : request.filter;
      const result = await replayEach(history, query, {
        dryRun: request.dryRun,
        ratePerSecond: rate,
        // Unrouted events (--status unrouted) were handed to no task: with --task, each goes to it (its source checked per event).
        takes: task === undefined ? undefined : (summary) => summary.status === "unrouted" || summary.deliveries.some((d) => d.task === task),
        replay: async (event) => {
          // By status dead, the dead letters still held (as the app's own replay does).
          const original = request.filter.status === "dead" && task === undefined ? await withHeldDeadLetters(store, event) : event;
          return queueReplay(store, history, original, await replayTargets(store, history, original, task, tasks, request.filter.status));
        },
        skipped: (event, error) => output.err(`skipped ${event.id}: ${error.message}`),
        // The count first: what is about to happen, and for how long.
        matched: (count) => {
          if (!request.json && count > 0) output.out(`replaying ${plural(count, "event")}, at most ${rate} a second (about ${Math.ceil(count / rate)}s)`);
        },
      });
      if (request.json) output.out(JSON.stringify(result));
      else if (result.dryRun) output.out(`would replay ${plural(result.matched, "event")} (dry run: nothing queued)`);
      else if (result.matched === 0) output.out("no events match: nothing replayed");
      else output.out(`replayed ${result.queued} of ${plural(result.matched, "event")} (their tasks run them when the app runs)`);
      if (result.matched === 0) await hintNames(history, request.filter, tasks, output);
      return 0;
    }
  }
}

/** Where the copies go (historyTargets), each under its task's flow limits (replay-flows.ts). */
async function replayTargets(store: Store, history: HistoryStore, event: HistoryEvent, task: string | undefined, tasks: readonly TaskQueues[] | undefined, status?: EventStatus): Promise<ReplayCopyTarget[]> {
  return withFlows(store, event, await historyTargets(history, event, task, tasks, status), tasks);
}

/**
 * The recorded targets, kept to the app's tasks when the app is known: a copy put in the queue
 * of a task removed since (or moved to another queue) would wait there for ever.
 */
async function historyTargets(history: HistoryStore, event: HistoryEvent, task: string | undefined, tasks: readonly TaskQueues[] | undefined, status?: EventStatus): Promise<ReplayCopyTarget[]> {
  if (event.status === "unrouted") return [await unroutedTarget(history, event, task, tasks)];
  const recorded = recordedTargets(event, task, status);
  if (tasks === undefined) return recorded;
  const known = recorded.filter((t) => tasks.some((k) => k.name === t.name && k.queue === t.queue));
  if (known.length > 0) return known;
  const names = tasks.map((k) => k.name).join(", ") || "none";
  const missing = recorded.map((t) => `"${t.name}"`).join(", ");
  throw new ReplayError(`cannot replay event "${event.id}": ${recorded.length === 1 ? "task" : "tasks"} ${missing} ${recorded.length === 1 ? "is" : "are"} not a task of this app (its tasks: ${names}); name one with --task`);
}

/**
 * An unrouted event goes to the task named with --task: routing it by the tasks' `on` and
 * filters needs their code, which the CLI does not run (the app's replay, or the console's, does).
 * The CLI knows which source a task is on only from the history: the task must have been handed
 * an event of the same source before, so that a misspelt name, or a task of another source,
 * does not get a copy it would never have taken.
 */
async function unroutedTarget(history: HistoryStore, event: HistoryEvent, task: string | undefined, tasks: readonly TaskQueues[] | undefined): Promise<ReplayCopyTarget> {
  const { origin } = event;
  if (origin.kind !== "webhook") throw new ReplayError(`cannot replay event "${event.id}": no task took it`);
  if (task === undefined) {
    throw new ReplayError(
      `cannot replay event "${event.id}": it was unrouted (no task took it); name the task to send it to with --task, or replay it from the running app (app.events.replay, the console), which routes it by its tasks' on and filter`,
    );
  }
  if (tasks !== undefined && !tasks.some((k) => k.name === task && k.input === undefined)) {
    const names = tasks.filter((k) => k.input === undefined).map((k) => k.name).join(", ") || "none";
    throw new ReplayError(`cannot replay event "${event.id}" to task "${task}": this app has no such task on a webhook source (its webhook tasks: ${names})`);
  }
  const seen = await history.list({ source: origin.source, task, limit: 1 });
  const delivery = seen.events[0]?.deliveries.find((d) => d.task === task);
  if (delivery === undefined) {
    throw new ReplayError(
      `cannot replay event "${event.id}" to task "${task}": the history holds no event of source "${origin.source}" handed to "${task}", so the CLI cannot tell that the task is on that source; replay it from the running app (app.events.replay, the console)`,
    );
  }
  const known = tasks?.find((k) => k.name === task);
  return { name: task, queue: known?.queue ?? delivery.queue, sharesEvents: false };
}

/** When nothing matched: a --source or --task that names nothing known. On stderr, so that `--json` output stays one document. */
async function hintNames(history: HistoryStore, filter: { readonly source?: string; readonly task?: string }, tasks: readonly TaskQueues[] | undefined, output: Output): Promise<void> {
  const hints = [filter.source === undefined ? undefined : await sourceHint(history, filter.source), filter.task === undefined ? undefined : await taskHint(history, filter.task, tasks)];
  for (const hint of hints) if (hint !== undefined) output.err(hint);
}

function notFound(id: string, output: Output): number {
  output.err(`error: no event with id ${id} in the history (it may have been pruned, lost in a crash before its note was written, or never accepted)`);
  return 1;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
