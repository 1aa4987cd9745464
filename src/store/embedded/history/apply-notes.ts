import type { RunNote } from "../../history";
import type { HistoryDbs } from "./history-env";
import {
  countSlot,
  runRow,
  statusCode,
  type ActivityCounts,
  type ActivityKey,
  type RunRow,
  type SummaryRecord,
} from "./history-records";
import type { EventHead, Note } from "./note-writer";

/** Width of the activity counters' buckets: the overview's chart is per minute. */
export const ACTIVITY_BUCKET_MS = 60_000;

export function activityBucket(receivedAt: number): number {
  return Math.floor(receivedAt / ACTIVITY_BUCKET_MS) * ACTIVITY_BUCKET_MS;
}

/** An event this batch wrote or changed: its summary is written once, at the end. */
export interface Touched {
  readonly at: number;
  readonly summary: SummaryRecord;
}

/**
 * Issues the writes of a batch of notes, all in the current turn of the event loop, so that
 * lmdb writes them in one transaction on its own thread; returns their promises. Reads see what
 * earlier batches committed (one batch is written at a time), and what this batch did is kept
 * in `touched`: a run noted in the same batch as its event finds it, and each summary is
 * written once however many runs changed it. A run whose event is unknown waits in `early`; an
 * event noted twice is written once.
 *
 * Activity counters are per writer (`tag`): each process adds to rows of its own, so two
 * processes writing the history (the app, a CLI replay) never overwrite each other's counts;
 * reads add the rows up.
 */
export function applyNotes(dbs: HistoryDbs, notes: readonly Note[], tag: string, recent: ReadonlyMap<string, Touched>): { writes: Promise<unknown>[]; touched: Map<string, Touched> } {
  const writes: Promise<unknown>[] = [];
  const touched = new Map<string, Touched>();
  const deltas = new Map<string, { readonly key: ActivityKey; readonly delta: number[] }>();
  const earlyHeld = dbs.early.getStats() as { entryCount?: number };
  const batch: Batch = { dbs, writes, touched, recent, deltas, tag, earlyRuns: (earlyHeld.entryCount ?? 0) > 0, earlyNext: new Map() };
  for (const note of notes) {
    if (note.event) applyEvent(batch, note.event, note.record);
    else applyRun(batch, note.run);
  }
  for (const [id, { at, summary }] of touched) keep(writes, dbs.timeline.put([at, id], summary));
  for (const { key, delta } of deltas.values()) {
    const counts: ActivityCounts = dbs.activity.get(key) ?? [0, 0, 0, 0, 0];
    for (let i = 0; i < 5; i++) counts[i] = counts[i]! + delta[i]!;
    keep(writes, dbs.activity.put(key, counts));
  }
  return { writes, touched };
}

/** Each write's promise, once: lmdb hands the same one to every unconditional write of a transaction. */
function keep(writes: Promise<unknown>[], write: Promise<unknown>): void {
  if (writes[writes.length - 1] !== write) writes.push(write);
}

interface Batch {
  readonly dbs: HistoryDbs;
  readonly writes: Promise<unknown>[];
  readonly touched: Map<string, Touched>;
  /** The previous batch's events as it wrote them: a run noted just after its event's batch finds it without a read. */
  readonly recent: ReadonlyMap<string, Touched>;
  readonly deltas: Map<string, { readonly key: ActivityKey; readonly delta: number[] }>;
  readonly tag: string;
  /** Whether early runs may be waiting (else no event looks for them). */
  earlyRuns: boolean;
  /** Next number of an early run, per event, in this batch. */
  readonly earlyNext: Map<string, number>;
  /** The counters deltaOf found last. */
  lastDelta?: { readonly key: ActivityKey; readonly delta: number[] };
}

function applyEvent(batch: Batch, note: EventHead, summary: SummaryRecord): void {
  const { dbs, writes, touched } = batch;
  // Noted twice in this batch or the last one: written once. (The index is not read to find
  // older duplicates: a process notes an event once, after its queue write, and another
  // process's events have ids of their own; that read was a random B-tree page per event.)
  if (touched.has(note.id) || batch.recent.has(note.id)) return;
  const at = note.receivedAt;
  touched.set(note.id, { at, summary });
  keep(writes, dbs.index.put(note.id, at));
  // The parent (or original) keeps the link: usually in this batch already (the run that emitted a value is noted with it).
  if (note.parentId !== undefined) link(batch, note.parentId, "c", note.id);
  if (note.replayOf !== undefined) link(batch, note.replayOf, "y", note.id);
  for (const d of summary.d) {
    const delta = deltaOf(batch, at, d[0], note.source);
    delta[0]!++;
    delta[4]!++;
  }
  if (batch.earlyRuns) {
    // Runs noted before the event join it now, in the order noted.
    for (const { key, value } of dbs.early.getRange({ start: [note.id, 0], end: [note.id, Number.MAX_SAFE_INTEGER] })) {
      addRun(batch, at, summary, value[0], value[1]);
      keep(writes, dbs.early.remove(key));
    }
  }
}

/** Adds `id` to an event's children or replays; an event not written yet gets none (reads skip what is not kept anyway). */
function link(batch: Batch, to: string, kind: "c" | "y", id: string): void {
  const entry = touchedOrRead(batch, to);
  if (entry === undefined) return;
  (entry.summary[kind] ??= []).push(id);
}

function touchedOrRead(batch: Batch, id: string): Touched | undefined {
  let entry = batch.touched.get(id);
  if (entry === undefined) {
    entry = batch.recent.get(id);
    if (entry !== undefined) batch.touched.set(id, entry);
  }
  if (entry === undefined) {
    const at = batch.dbs.index.get(id);
    const summary = at === undefined ? undefined : batch.dbs.timeline.get([at, id]);
    if (at !== undefined && summary !== undefined) batch.touched.set(id, (entry = { at, summary }));
  }
  return entry;
}

function applyRun(batch: Batch, note: RunNote): void {
  const row = runRow(note.run);
  const status = statusCode(note.status);
  const entry = touchedOrRead(batch, note.eventId);
  if (entry === undefined) return keepEarly(batch, note.eventId, row, status);
  addRun(batch, entry.at, entry.summary, row, status);
}

function keepEarly(batch: Batch, eventId: string, row: RunRow, status: number): void {
  let n = batch.earlyNext.get(eventId);
  if (n === undefined) {
    const [last] = [...batch.dbs.early.getKeys({ start: [eventId, Number.MAX_SAFE_INTEGER], end: [eventId, -1], reverse: true, limit: 1 })];
    n = last === undefined ? 0 : last[1] + 1;
  }
  batch.earlyNext.set(eventId, n + 1);
  keep(batch.writes, batch.dbs.early.put([eventId, n], [row, status]));
  batch.earlyRuns = true;
}

/** Adds a run to `summary` and updates its delivery (written at the end of the batch). */
function addRun(batch: Batch, at: number, summary: SummaryRecord, row: RunRow, status: number): void {
  summary.u.push(row);
  const task = row[0];
  const delivery = summary.d.find((d) => d[0] === task);
  if (!delivery) return;
  const before = delivery[1];
  delivery[1] = status;
  delivery[2]++;
  const lastError = row[4] === "success" ? null : (row[6] ?? null);
  while (delivery.length < 4) delivery.push(null);
  delivery[3] = lastError;
  while (delivery.length > 3 && (delivery[delivery.length - 1] === null || delivery[delivery.length - 1] === undefined)) delivery.pop();
  if (before !== status) {
    const delta = deltaOf(batch, at, task, summary.q === 1 ? "" : summary.o);
    delta[countSlot(before)]!--;
    delta[countSlot(status)]!++;
  }
}

function deltaOf(batch: Batch, at: number, task: string, source: string): number[] {
  const bucket = activityBucket(at);
  // Most notes of a batch fall in one minute and a few tasks: the last counter is usually the one.
  const last = batch.lastDelta;
  if (last !== undefined && last.key[0] === bucket && last.key[1] === task && last.key[2] === source) return last.delta;
  const id = `${bucket}\u0000${task}\u0000${source}`;
  let entry = batch.deltas.get(id);
  if (!entry) batch.deltas.set(id, (entry = { key: [bucket, task, source, batch.tag], delta: [0, 0, 0, 0, 0] }));
  batch.lastDelta = entry;
  return entry.delta;
}
