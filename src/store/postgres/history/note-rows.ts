import type { EventNote, RunNote } from "../../history";
import { STATUS_CODES } from "./history-tables";
import { jsonText, storableJson, storableJsonText } from "./history-json";

/** A note as the rows it writes, each row already JSON text (so that a batch is joined, not stringified again). */
export interface NoteRows {
  readonly events: readonly string[];
  readonly runs: readonly string[];
  /** Characters of JSON text: what a batch's size is counted in. */
  readonly size: number;
}

const NONE: readonly string[] = [];

export function eventRows(note: EventNote): NoteRows {
  const { origin } = note;
  // The payload is made JSON on its own, then set in the row as it is: one pass over it.
  const head = JSON.stringify({
    id: note.id,
    r: note.receivedAt,
    s: origin.kind === "webhook" ? origin.source : null,
    q: origin.kind === "queue" ? origin.queue : null,
    n: note.name ?? null,
    p: note.parentId ?? null,
    o: note.replayOf ?? null,
    t: note.traceId ?? null,
    k: note.deliveries.map((d) => d.task),
    qs: note.deliveries.map((d) => d.queue),
    ms: note.deliveries.map((d) => d.messageId),
    raw: note.raw === undefined ? null : note.raw.toString("base64"),
  });
  const row = storableJsonText(`${head.slice(0, -1)},"payload":${jsonText(note.payload ?? null)}}`);
  return { events: [row], runs: NONE, size: row.length };
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
  return { events: NONE, runs: [row], size: row.length };
}
