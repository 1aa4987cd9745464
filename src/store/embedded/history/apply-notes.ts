import type { EventNote, RunNote } from "../../history";
import type { HistoryDbs } from "./history-env";
import {
  bodyRecord,
  CHILD,
  countSlot,
  REPLAY,
  runRow,
  statusCode,
  summaryRecord,
  type ActivityCounts,
  type ActivityKey,
  type RunRow,
  type SummaryRecord,
} from "./history-records";
import type { Note } from "./note-writer";

/** Width of the activity counters' buckets: the overview's chart is per minute. */
export const ACTIVITY_BUCKET_MS = 60_000;

export function activityBucket(receivedAt: number): number {
  return Math.floor(receivedAt / ACTIVITY_BUCKET_MS) * ACTIVITY_BUCKET_MS;
}

type Deltas = Map<string, { readonly key: ActivityKey; readonly delta: number[] }>;

/**
 * Writes a batch of notes; called inside one write transaction (reads see its writes), so a run
 * noted in the same batch as its event finds it. A note about an unknown event (dropped, or
 * pruned meanwhile) is skipped; an event noted twice is written once.
 */
export function applyNotes(dbs: HistoryDbs, notes: readonly Note[]): void {
  const deltas: Deltas = new Map();
  for (const note of notes) {
    if (note.event) applyEvent(dbs, note.event, deltas);
    else applyRun(dbs, note.run, deltas);
  }
  for (const { key, delta } of deltas.values()) {
    const counts: ActivityCounts = dbs.activity.get(key) ?? [0, 0, 0, 0, 0];
    for (let i = 0; i < 5; i++) counts[i] = Math.max(0, counts[i]! + delta[i]!);
    dbs.activity.put(key, counts);
  }
}

function applyEvent(dbs: HistoryDbs, note: EventNote, deltas: Deltas): void {
  if (dbs.index.get(note.id) !== undefined) return;
  const at = note.receivedAt;
  const summary = summaryRecord(note);
  dbs.index.put(note.id, at);
  dbs.bodies.put(note.id, bodyRecord(note));
  if (note.parentId !== undefined) dbs.links.put([note.parentId, CHILD, at, note.id], true);
  if (note.replayOf !== undefined) dbs.links.put([note.replayOf, REPLAY, at, note.id], true);
  const source = note.origin.kind === "webhook" ? note.origin.source : "";
  for (const d of summary.d) {
    const delta = deltaOf(deltas, [activityBucket(at), d[0], source]);
    delta[0]!++;
    delta[4]!++;
  }
  // Runs noted before the event join it now, in the order noted.
  for (const { key, value } of dbs.early.getRange({ start: [note.id, 0], end: [note.id, Number.MAX_SAFE_INTEGER] })) {
    addRun(dbs, note.id, at, summary, value[0], value[1], deltas);
    dbs.early.remove(key);
  }
  dbs.timeline.put([at, note.id], summary);
}

function applyRun(dbs: HistoryDbs, note: RunNote, deltas: Deltas): void {
  const row = runRow(note.run);
  const status = statusCode(note.status);
  const at = dbs.index.get(note.eventId);
  const summary = at === undefined ? undefined : dbs.timeline.get([at, note.eventId]);
  if (at === undefined || summary === undefined) {
    const [last] = [...dbs.early.getKeys({ start: [note.eventId, Number.MAX_SAFE_INTEGER], end: [note.eventId, -1], reverse: true, limit: 1 })];
    dbs.early.put([note.eventId, last === undefined ? 0 : last[1] + 1], [row, status]);
    return;
  }
  addRun(dbs, note.eventId, at, summary, row, status, deltas);
  dbs.timeline.put([at, note.eventId], summary);
}

/** Writes a run and updates its delivery in `summary` (which the caller writes). */
function addRun(dbs: HistoryDbs, id: string, at: number, summary: SummaryRecord, row: RunRow, status: number, deltas: Deltas): void {
  dbs.runs.put([id, summary.r], row);
  summary.r++;
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
    const delta = deltaOf(deltas, [activityBucket(at), task, summary.q === 1 ? "" : summary.o]);
    delta[countSlot(before)]!--;
    delta[countSlot(status)]!++;
  }
}

function deltaOf(deltas: Deltas, key: ActivityKey): number[] {
  const id = `${key[0]}\u0000${key[1]}\u0000${key[2]}`;
  let entry = deltas.get(id);
  if (!entry) deltas.set(id, (entry = { key, delta: [0, 0, 0, 0, 0] }));
  return entry.delta;
}
