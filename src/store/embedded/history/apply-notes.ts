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
  dbs.index.put(note.id, at);
  dbs.timeline.put([at, note.id], summaryRecord(note));
  dbs.bodies.put(note.id, bodyRecord(note));
  if (note.parentId !== undefined) dbs.links.put([note.parentId, CHILD, at, note.id], true);
  if (note.replayOf !== undefined) dbs.links.put([note.replayOf, REPLAY, at, note.id], true);
  const source = note.origin.kind === "webhook" ? note.origin.source : "";
  for (const d of note.deliveries) {
    const delta = deltaOf(deltas, [activityBucket(at), d.task, source]);
    delta[0]!++;
    delta[4]!++;
  }
}

function applyRun(dbs: HistoryDbs, note: RunNote, deltas: Deltas): void {
  const at = dbs.index.get(note.eventId);
  if (at === undefined) return;
  const summary = dbs.timeline.get([at, note.eventId]);
  if (summary === undefined) return;
  dbs.runs.put([note.eventId, summary.r], runRow(note.run));
  summary.r++;
  const delivery = summary.d.find((d) => d[0] === note.run.task);
  if (delivery) {
    const before = delivery[1];
    const after = statusCode(note.status);
    delivery[1] = after;
    delivery[2] = Math.max(delivery[2] + 1, note.run.attempt);
    const lastError = note.run.outcome === "success" ? null : (note.run.error?.message ?? null);
    while (delivery.length < 4) delivery.push(null);
    delivery[3] = lastError;
    while (delivery.length > 3 && (delivery[delivery.length - 1] === null || delivery[delivery.length - 1] === undefined)) delivery.pop();
    if (before !== after) {
      const delta = deltaOf(deltas, [activityBucket(at), note.run.task, summary.q === 1 ? "" : summary.o]);
      delta[countSlot(before)]!--;
      delta[countSlot(after)]!++;
    }
  }
  dbs.timeline.put([at, note.eventId], summary);
}

function deltaOf(deltas: Deltas, key: ActivityKey): number[] {
  const id = `${key[0]}\u0000${key[1]}\u0000${key[2]}`;
  let entry = deltas.get(id);
  if (!entry) deltas.set(id, (entry = { key, delta: [0, 0, 0, 0, 0] }));
  return entry.delta;
}
