import { randomUUID } from "node:crypto";
import type { DeliveryNote, EventNote, HistoryEvent, HistoryStore } from "../store/history";
import type { EmitRecord, QueuedMessage, Store } from "../store/store";
import type { BulkReplayOptions, BulkReplayResult, ReplayFilter, ReplayOptions, ReplayResult } from "./events-api";
import { copyId } from "./fan-out";

/** A replay the history cannot make: an unknown event, a task it was not handed to, a bad option. */
export class ReplayError extends Error {
  override readonly name = "ReplayError";
}

export const DEFAULT_REPLAY_RATE = 50;
/** Events a bulk replay reads from the history per page. */
const PAGE = 500;

/**
 * What a replay needs of whoever makes it (the app, or the CLI on a store alone): the store its
 * copies go to, its history, and the time and ids (swappable in tests).
 */
export interface ReplayTarget {
  readonly store: Store;
  readonly history: HistoryStore;
  /** The replay's copies, one per delivery: by default, to each delivery's recorded queue. */
  readonly copies?: (replay: ReplayCopyPlan) => EmitRecord[];
  readonly newId?: () => string;
}

/** One replay about to be queued: the original, the new id, the deliveries to run again. */
export interface ReplayCopyPlan {
  readonly original: HistoryEvent;
  readonly id: string;
  readonly deliveries: readonly DeliveryNote[];
  readonly message: QueuedMessage;
}

/**
 * Replays one event: a new delivery of the same payload (and raw bytes) to the tasks it was
 * handed to (or the one named), with fresh attempts and a new id, linked to the original
 * (`replayOf`; the original's `replays`). Needs only the store: its copies go to the queues the
 * history recorded for each delivery, so a tool with no app code (the CLI's `--store`) makes
 * the same replay the app does. Resolves once the copies are stored and the note is written.
 */
export async function replayEvent(target: ReplayTarget, id: string, options: ReplayOptions = {}): Promise<ReplayResult> {
  checkTask(options.task);
  const original = await target.history.get(id);
  if (original === undefined) throw new ReplayError(`no event with id ${JSON.stringify(id)} in the history (it may have been pruned, or never accepted)`);
  const result = await queueReplay(target, original, options.task);
  await target.history.flush();
  return result;
}

/**
 * Replays every event the filter matches (its list, newest first, read whole before the first
 * replay is queued: the replays made meanwhile are not replayed again), at most
 * `ratePerSecond` a second. A dry run counts them and queues nothing.
 */
export async function replayMatching(
  target: ReplayTarget,
  filter: ReplayFilter,
  options: BulkReplayOptions = {},
  /** Told how many matched, before the first replay is queued (the CLI's "about N s"). */
  matched?: (count: number) => void,
): Promise<BulkReplayResult> {
  checkTask(options.task);
  const rate = options.ratePerSecond ?? DEFAULT_REPLAY_RATE;
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0) throw new ReplayError(`ratePerSecond must be a number above 0, got ${String(rate)}`);
  if (typeof filter !== "object" || filter === null) throw new ReplayError("a replay filter is an object { source?, task?, status?, since?, until?, search? }");
  const { limit: _limit, cursor: _cursor, ...query } = filter as ReplayFilter & { limit?: unknown; cursor?: unknown };
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await target.history.list({ ...query, limit: PAGE, ...(cursor === undefined ? {} : { cursor }) });
    // With a task, only events handed to it: the others would each fail.
    for (const event of page.events) if (options.task === undefined || event.deliveries.some((d) => d.task === options.task)) ids.push(event.id);
    cursor = page.next;
  } while (cursor !== undefined);
  if (options.dryRun === true) return { matched: ids.length, queued: 0, dryRun: true };
  matched?.(ids.length);
  const started = Date.now();
  let queued = 0;
  for (const id of ids) {
    // Paced from the start: the n-th replay waits until n / rate seconds have passed.
    const due = started + (queued * 1000) / rate;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const original = await target.history.get(id);
    if (original === undefined) continue; // pruned since it was listed
    await queueReplay(target, original, options.task);
    queued++;
  }
  await target.history.flush();
  return { matched: ids.length, queued, dryRun: false };
}

/** Stores the replay's copies (all or none), then notes it in the history. */
async function queueReplay(target: ReplayTarget, original: HistoryEvent, task: string | undefined): Promise<ReplayResult> {
  const deliveries = task === undefined ? original.deliveries : original.deliveries.filter((d) => d.task === task);
  if (deliveries.length === 0) {
    const tasks = original.deliveries.map((d) => d.task);
    throw new ReplayError(
      task === undefined
        ? `event ${original.id} was handed to no task: there is nothing to replay`
        : `event ${original.id} was not handed to task "${task}" (${tasks.length === 0 ? "no task took it" : `its tasks: ${tasks.join(", ")}`})`,
    );
  }
  const id = (target.newId ?? randomUUID)();
  const receivedAt = Date.now();
  const message: QueuedMessage = {
    id,
    payload: original.payload,
    ...(original.raw === undefined ? {} : { raw: original.raw }),
    attempts: 0,
    enqueuedAt: receivedAt,
    // As the receiver stores it: an engine may keep the body once, as the raw bytes.
    ...(original.origin.kind === "webhook" && original.raw !== undefined ? { bodyFromRaw: true } : {}),
  };
  const plan: ReplayCopyPlan = { original, id, deliveries, message };
  const copies = target.copies?.(plan) ?? recordedCopies(plan);
  const notes: DeliveryNote[] = copies.map((copy) => ({ task: taskOfCopy(plan, copy), queue: copy.queue, messageId: copy.message.id }));
  // Internal: a replay someone asked for is not a sender to turn away at the ingress limits.
  if (copies.length === 1) await target.store.enqueue(copies[0].queue, copies[0].message, { internal: true });
  else await target.store.enqueueAll(copies, { internal: true });
  const note: EventNote = {
    id,
    origin: original.origin,
    ...(original.name === undefined ? {} : { name: original.name }),
    receivedAt,
    deliveries: notes,
    payload: original.payload,
    ...(original.raw === undefined ? {} : { raw: original.raw }),
    ...(original.parentId === undefined ? {} : { parentId: original.parentId }),
    replayOf: original.id,
    ...(original.traceId === undefined ? {} : { traceId: original.traceId }),
  };
  target.history.noteEvent(note);
  return { id, replayOf: original.id, tasks: notes.map((n) => n.task) };
}

/**
 * One copy per delivery, to the queue the history recorded for it; ids as the app gives them
 * (the event's id for a lone copy, `<id>@<task>` when the original's copies had their own).
 */
export function recordedCopies(plan: ReplayCopyPlan): EmitRecord[] {
  const own = plan.original.deliveries.length > 1 || plan.original.deliveries.some((d) => d.messageId !== plan.original.id);
  return plan.deliveries.map((d) => ({ queue: d.queue, message: own ? { ...plan.message, id: copyId(plan.id, d.task) } : plan.message }));
}

function taskOfCopy(plan: ReplayCopyPlan, copy: EmitRecord): string {
  const byQueue = plan.deliveries.find((d) => d.queue === copy.queue);
  return byQueue?.task ?? plan.deliveries[0].task;
}

function checkTask(task: unknown): void {
  if (task !== undefined && (typeof task !== "string" || task === "")) throw new ReplayError(`task must be a task's name, got ${JSON.stringify(task)}`);
}
