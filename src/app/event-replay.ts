import { setTimeout as sleep } from "node:timers/promises";
import type { DeliveryNote, DeliveryView, EventNote, EventStatus, EventSummary, HistoryEvent, HistoryQuery, HistoryStore } from "../store/history";
import type { EmitRecord, QueuedMessage, Store } from "../store/store";
import { exactForm, UnstorableValueError } from "../store/payload-codec";
import type { BulkReplayResult, ReplayResult } from "./events-api";
import { copyId } from "./fan-out";
import { computeOrderingKey, type OrderingKeyFn } from "./ordering-key";
import { withFlowKeys } from "./flow/flow-keys";
import type { TaskFlow } from "./flow/flow-options";
import { withGroupKey, type TaskGroup } from "./flow/group-options";
import { newEventId } from "../util/event-id";

/**
 * Replays as the store alone can make them: what `app.events.replay` does with the app's tasks,
 * and what the CLI does with `--store`, where no app code is loaded and the tasks are known
 * only from what the history recorded of each delivery.
 */

export const DEFAULT_REPLAY_RATE = 50;

/** An event that cannot be replayed, or a replay asked wrongly. */
export class ReplayError extends Error {
  override readonly name: string = "ReplayError";
}

/** A bulk replay ended by the app's stop(): the replays it queued stay queued. */
export class ReplayStoppedError extends ReplayError {
  override readonly name = "ReplayStoppedError";

  constructor(
    /** Events the filter matched (so far, when it stopped while still listing them). */
    readonly matched: number,
    /** Replays queued before it stopped. */
    readonly queued: number,
  ) {
    super(`bulk replay stopped as the app stops, after queueing ${queued} replay(s) of ${matched} matching event(s); the replays queued stay queued`);
  }
}

/** Where one task's copy of a replay goes. */
export interface ReplayCopyTarget {
  readonly name: string;
  /** Its physical queue. */
  readonly queue: string;
  /** Its queue holds copies of events several tasks take: a copy's id is `<id>@<task>`. */
  readonly sharesEvents: boolean;
  /** Known when the app is: a replay then gets the key the task gives it now. */
  readonly orderingKey?: OrderingKeyFn<never> | undefined;
  /** A task's shared flow limits: its copy is counted in its concurrency and rate groups, as an arriving event is. */
  readonly flow?: TaskFlow | undefined;
  /** A debounced or batched task's grouping: its copy needs its group key, or no claim hands it out. */
  readonly group?: TaskGroup | undefined;
}

/**
 * Stores a fresh copy of the event (a new id, no attempts yet) for each target, all or none,
 * then notes the replay in the history, linked to its original (`replayOf`; the original's
 * `replays`).
 */
export async function queueReplay(store: Store, history: HistoryStore, event: HistoryEvent, targets: readonly ReplayCopyTarget[]): Promise<ReplayResult> {
  if (event.payload === undefined) throw new ReplayError(`cannot replay event "${event.id}": its payload was not kept in the history`);
  const now = Date.now();
  const id = newEventId(now);
  const copies: EmitRecord[] = [];
  const deliveries: DeliveryNote[] = [];
  for (const target of targets) {
    // Each copy its own payload, as fan-out gives them: a handler changing its event in place changes no other's.
    // Exact: the body as received, a `__proto__` key and lone surrogates (JSON escapes may make them) included.
    const payload = replayPayload(event);
    let message: QueuedMessage = { id: target.sharesEvents ? copyId(id, target.name) : id, payload, attempts: 0, enqueuedAt: now };
    if (event.raw !== undefined) message = { ...message, raw: event.raw };
    if (target.orderingKey !== undefined) {
      const orderingKey = computeOrderingKey(target.orderingKey, payload, target.name);
      if (orderingKey !== undefined) message = { ...message, orderingKey };
    }
    if (target.flow !== undefined) message = withFlowKeys(target.flow, message, payload, target.name);
    if (target.group !== undefined) message = withGroupKey(target.group, message, payload, target.name);
    copies.push({ queue: target.queue, message });
    deliveries.push({ task: target.name, queue: target.queue, messageId: message.id });
  }
  await (copies.length === 1 ? store.enqueue(copies[0].queue, copies[0].message) : store.enqueueAll(copies));
  const note: { -readonly [K in keyof EventNote]: EventNote[K] } = { id, origin: event.origin, receivedAt: now, deliveries, payload: event.payload, replayOf: event.id };
  if (event.raw !== undefined) note.raw = event.raw;
  if (event.name !== undefined) note.name = event.name;
  history.noteEvent(note);
  return { id, replayOf: event.id, tasks: targets.map((t) => t.name) };
}

/**
 * A copy of the event's payload for one replay; a ReplayError when no store can hold it (a body
 * deeper than a store writes, let in by a raised maxBodyDepth): the event cannot be replayed,
 * and a bulk replay skips it.
 */
function replayPayload(event: HistoryEvent): unknown {
  try {
    return exactForm(event.payload, "payload");
  } catch (error) {
    if (!(error instanceof UnstorableValueError)) throw error;
    throw new ReplayError(`cannot replay event "${event.id}": its payload cannot be stored again: ${error.message}`, { cause: error });
  }
}

/**
 * The event with only the dead deliveries whose dead letter the store still holds: one replayed
 * or discarded since was handled, and a replay by status "dead" must not run it again (the
 * history keeps the delivery dead: that is what happened to it). None left: a ReplayError.
 */
export async function withHeldDeadLetters(store: Store, event: HistoryEvent): Promise<HistoryEvent> {
  const deliveries: DeliveryView[] = [];
  for (const delivery of event.deliveries) {
    if (delivery.status !== "dead" || (await store.deadLetters.get(delivery.messageId)) !== undefined) deliveries.push(delivery);
  }
  if (deliveries.length === event.deliveries.length) return event;
  if (!deliveries.some((d) => d.status === "dead")) {
    throw new ReplayError(`cannot replay event "${event.id}": its dead letters were replayed or discarded since`);
  }
  return { ...event, deliveries };
}

/** How a bulk replay walks the history. */
export interface ReplayWalk {
  readonly dryRun: boolean;
  readonly ratePerSecond: number;
  /** Whether a listed event is one to replay (beyond the query). */
  readonly takes?: (summary: EventSummary) => boolean;
  /** Replays one event (queueReplay with its targets). */
  readonly replay: (event: HistoryEvent) => Promise<unknown>;
  /** An event the replay refused (a ReplayError): told, and the walk goes on. */
  readonly skipped: (event: HistoryEvent, error: ReplayError) => void;
  /** Told how many matched, before the first replay is queued (the CLI says how long it will take). */
  readonly matched?: (count: number) => void;
  /** Aborted when the app stops: no replay is queued after it (a ReplayStoppedError). */
  readonly signal?: AbortSignal;
}

/**
 * Replays every event the query matches: every match first (ids only), then the replays oldest
 * first, in the order the events were received, never one of the replays made meanwhile; at
 * most `ratePerSecond` a second (the n-th replay no sooner than n / rate seconds after the
 * first). A dry run counts and queues nothing. Once `signal` aborts, nothing more is queued:
 * a ReplayStoppedError counts what was.
 */
export async function replayEach(history: HistoryStore, query: HistoryQuery, walk: ReplayWalk): Promise<BulkReplayResult> {
  // A function, not a field read: the compiler would take one check for all of them.
  const stopped = (): boolean => walk.signal?.aborted === true;
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    if (stopped()) throw new ReplayStoppedError(ids.length, 0);
    const page = await history.list({ ...query, limit: 500, cursor });
    cursor = page.next;
    for (const summary of page.events) if (walk.takes === undefined || walk.takes(summary)) ids.push(summary.id);
  } while (cursor !== undefined);
  const matched = ids.length;
  if (walk.dryRun) return { matched, queued: 0, dryRun: true };
  walk.matched?.(matched);
  let queued = 0;
  const started = Date.now();
  try {
    for (let i = ids.length - 1; i >= 0; i--) {
      if (stopped()) throw new ReplayStoppedError(matched, queued);
      const event = await history.get(ids[i]);
      // Pruned since it was listed.
      if (event === undefined) continue;
      const wait = started + (queued * 1000) / walk.ratePerSecond - Date.now();
      // The pause ends with the app's stop, not after it: a slow pace must not hold the stop up.
      if (wait > 0) await sleep(wait, undefined, { signal: walk.signal }).catch(() => undefined);
      if (stopped()) throw new ReplayStoppedError(matched, queued);
      try {
        await walk.replay(event);
      } catch (error) {
        // One event that cannot be replayed (its tasks are gone, its payload was not kept) does not stop the others.
        if (!(error instanceof ReplayError)) throw error;
        walk.skipped(event, error);
        continue;
      }
      queued++;
    }
  } catch (error) {
    if (queued === 0 || error instanceof ReplayStoppedError) throw error;
    throw new ReplayError(`replay stopped after queueing ${queued} replay(s) of ${matched} matching event(s): ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    await history.flush();
  }
  return { matched, queued, dryRun: false };
}

/**
 * The targets of a replay known from the history alone: each delivery's recorded queue (or
 * the named task's), its copy id shaped as the original's. No ordering key: the task's key
 * function is the app's code (the app's own replays compute it).
 */
export function recordedTargets(event: HistoryEvent, task: string | undefined, status?: EventStatus): ReplayCopyTarget[] {
  // By status (a bulk replay's filter): only the deliveries in it; a task that succeeded would run the event twice.
  const deliveries = task === undefined ? event.deliveries.filter((d) => status === undefined || d.status === status) : event.deliveries.filter((d) => d.task === task);
  if (deliveries.length === 0 && task === undefined && status !== undefined && event.deliveries.length > 0) {
    throw new ReplayError(`cannot replay event "${event.id}": none of its deliveries is ${status} any more`);
  }
  if (deliveries.length === 0) {
    const tasks = event.deliveries.map((d) => d.task);
    throw new ReplayError(
      task === undefined
        ? `cannot replay event "${event.id}": no task took it`
        : `cannot replay event "${event.id}" to task "${task}": it was not handed to that task (${tasks.length === 0 ? "no task took it" : `its tasks: ${tasks.join(", ")}`})`,
    );
  }
  return deliveries.map((d) => ({ name: d.task, queue: d.queue, sharesEvents: d.messageId !== event.id }));
}
