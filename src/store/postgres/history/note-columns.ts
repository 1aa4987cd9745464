import type { EventRow, NoteRows, RunRow } from "./note-rows";

/*
 * A batch of notes as the write statement's parameters: one per column, holding that column of
 * every row (unnest makes the rows again). The database reads array literals at a fraction of
 * the cost of a JSON document of rows, and the payloads and raw bodies, the longest, go with
 * no quoting at all.
 */

/**
 * Separates the payloads' JSON texts in their parameter, and the raw bodies' base64. Neither
 * ever holds it (JSON escapes every control character), so the texts go as they are, with
 * nothing to unquote.
 */
const PAYLOAD_SEPARATOR = "\u001e";
/** A payload or raw body that is none (SQL NULL): neither JSON text nor base64, so none reads as it. */
const NO_PAYLOAD = "-";

/**
 * An escape of JSON other than \" and \\ (a control character, a lone surrogate), which an
 * array literal would misread. Also matches some texts that hold none (a backslash before a
 * letter): those take the slow way too, still right.
 */
const OTHER_ESCAPE = /\\[^"\\]/;
const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * Values (texts, numbers, booleans, nulls) as a PostgreSQL array literal. JSON.stringify
 * writes one (brackets aside) for texts whose only escapes are \" and \\, the same two as an
 * array literal's, and for numbers (one that is not finite becomes null: NULL, which the NOT
 * NULL columns refuse) and booleans: native, and several times faster than quoting each
 * element here, which only texts with other escapes take.
 */
export function arrayLiteral(values: readonly (string | number | boolean | null)[]): string {
  const json = JSON.stringify(values);
  if (!OTHER_ESCAPE.test(json)) return `{${json.slice(1, -1)}}`;
  // Numbers and booleans never hold a backslash: only texts come here, each quoted.
  return `{${values.map((value) => (typeof value === "string" ? quoted(value) : (JSON.stringify(value) ?? "NULL"))).join(",")}}`;
}

/**
 * A text as an element of an array literal: quoted, so that any text is itself, with U+0000,
 * which text columns refuse (failing the whole batch), made U+FFFD as in the payloads (see
 * history-json); lone surrogates become U+FFFD on their way to UTF-8.
 */
function quoted(value: string): string {
  const text = value.includes("\u0000") ? value.replaceAll("\u0000", "\ufffd") : value;
  return NEEDS_ESCAPE.test(text) ? `"${text.replace(ESCAPED, "\\$&")}"` : `"${text}"`;
}

type Column<R> = (row: R) => string | number | boolean | null;

/** The events' columns other than the payload, in the statement's order (see write-notes-sql). */
const EVENT_COLUMNS: readonly Column<EventRow>[] = [
  (e) => e.id,
  (e) => e.receivedAt,
  (e) => e.source,
  (e) => e.queue,
  (e) => e.name,
  (e) => e.parentId,
  (e) => e.replayOf,
  (e) => e.traceId,
  (e) => e.task,
  (e) => e.tasks,
  (e) => e.queue1,
  (e) => e.queues,
  (e) => e.messageId,
  (e) => e.messageIds,
];
const EVENT_TAIL: readonly Column<EventRow>[] = [(e) => e.bodyFromRaw];
const RUN_COLUMNS: readonly Column<RunRow>[] = [
  (r) => r.eventId,
  (r) => r.task,
  (r) => r.attempt,
  (r) => r.startedAt,
  (r) => r.durationMs,
  (r) => r.outcome,
  (r) => r.status,
  (r) => r.errorType,
  (r) => r.errorMessage,
  (r) => r.errorStack,
  (r) => r.emitted1,
  (r) => r.emitted,
];

/** The write statement's parameters for a batch (see write-notes-sql for their order). */
export function noteColumns(batch: readonly NoteRows[]): string[] {
  const events: EventRow[] = [];
  const runs: RunRow[] = [];
  for (const rows of batch) {
    for (const e of rows.events) events.push(e);
    for (const r of rows.runs) runs.push(r);
  }
  return [
    ...EVENT_COLUMNS.map((column) => arrayLiteral(events.map(column))),
    events.map((e) => e.payload ?? NO_PAYLOAD).join(PAYLOAD_SEPARATOR),
    // Base64, the same way. One may be empty (no bytes): led by a separator, so that a batch of
    // one such event is one empty text, not none (the statement drops the first).
    events.length === 0 ? "" : PAYLOAD_SEPARATOR + events.map((e) => e.raw ?? NO_PAYLOAD).join(PAYLOAD_SEPARATOR),
    ...EVENT_TAIL.map((column) => arrayLiteral(events.map(column))),
    ...RUN_COLUMNS.map((column) => arrayLiteral(runs.map(column))),
  ];
}
