import type { EventNote, RunNote } from "../../history";
import { STATUS_CODES } from "./history-tables";
import { storableJson } from "./history-json";

/** A note as the rows it writes, each row already JSON text (so that a batch is joined, not stringified again). */
export interface NoteRows {
  readonly events: readonly string[];
  readonly deliveries: readonly string[];
  readonly runs: readonly string[];
  /** Characters of JSON text: what a batch's size is counted in. */
  readonly size: number;
}

export function eventRows(note: EventNote): NoteRows {
  const { origin } = note;
  const event = storableJson({
    id: note.id,
    r: note.receivedAt,
    s: origin.kind === "webhook" ? origin.source : null,
    q: origin.kind === "queue" ? origin.queue : null,
    n: note.name ?? null,
    p: note.parentId ?? null,
    o: note.replayOf ?? null,
    t: note.traceId ?? null,
    payload: note.payload ?? null,
    raw: note.raw === undefined ? null : note.raw.toString("base64"),
  });
  const deliveries = note.deliveries.map((d) => storableJson({ e: note.id, k: d.task, q: d.queue, m: d.messageId, r: note.receivedAt }));
  return { events: [event], deliveries, runs: [], size: event.length + deliveries.reduce((n, d) => n + d.length, 0) };
}

export function runRows(note: RunNote): NoteRows {
  const { run } = note;
  const row = storableJson({
    e: note.eventId,
    k: run.task,
    a: run.attempt,
    s: run.startedAt,
    d: run.durationMs,
    o: run.outcome,
    st: STATUS_CODES[note.status] ?? STATUS_CODES.pending,
    et: run.error?.type ?? null,
    em: run.error?.message ?? null,
    es: run.error?.stack ?? null,
    x: run.emitted ?? null,
  });
  return { events: [], deliveries: [], runs: [row], size: row.length };
}
