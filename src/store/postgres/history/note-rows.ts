import type { EventNote, RunNote } from "../../history";
import { STATUS_CODES } from "./history-tables";
import { jsonText, storableJsonText } from "./history-json";
import { arrayLiteral } from "./note-columns";

/**
 * An event's row as the statement takes it (see note-columns): texts, numbers, null for none.
 * Its payload is JSON text; its raw bytes base64. Its deliveries' tasks, queues and message ids
 * are the one delivery's texts, or text[] literals (a literal costs the database a parse).
 */
export interface EventRow {
  readonly id: string;
  readonly receivedAt: number;
  readonly source: string | null;
  readonly queue: string | null;
  readonly name: string | null;
  readonly parentId: string | null;
  readonly replayOf: string | null;
  readonly traceId: string | null;
  /** One delivery (nearly every event): its task, queue and message id, and no literals. */
  readonly task: string | null;
  readonly queue1: string | null;
  readonly messageId: string | null;
  /** Other than one: the text[] literals. */
  readonly tasks: string | null;
  readonly queues: string | null;
  readonly messageIds: string | null;
  readonly payload: string | null;
  readonly raw: string | null;
  readonly bodyFromRaw: boolean;
}

/** A run's row, the same way. */
export interface RunRow {
  readonly eventId: string;
  readonly task: string;
  readonly attempt: number;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly outcome: string;
  readonly status: number;
  readonly errorType: string | null;
  readonly errorMessage: string | null;
  readonly errorStack: string | null;
  /** What it emitted when that is one id; else a text[] literal of them (or null for none). */
  readonly emitted1: string | null;
  readonly emitted: string | null;
}

/** A note as the rows it writes, encoded when noted (the note as it was then, whatever happens to its objects later). */
export interface NoteRows {
  readonly events: readonly EventRow[];
  readonly runs: readonly RunRow[];
  /** Characters of the encoded values: what a batch's size is counted in. */
  readonly size: number;
}

const NONE: readonly never[] = [];

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A webhook payload's body, when it is exactly what its raw bytes parse to as JSON (the usual
 * JSON webhook): the payload is then stored without it, and the body read back from the bytes.
 * The bytes must be UTF-8 and hold nothing jsonb refuses, so that the database can read them
 * as JSON too (a body field search). Bytes starting with a BOM never qualify (neither jsonb nor
 * JSON.parse takes one): their body is kept in the payload.
 */
function bodyInRaw(note: EventNote): { readonly rest: Record<string, unknown> } | undefined {
  const { payload, raw } = note;
  if (raw === undefined || note.origin.kind !== "webhook" || typeof payload !== "object" || payload === null || Array.isArray(payload)) return undefined;
  const { body, ...rest } = payload as Record<string, unknown>;
  if (typeof body !== "object" || body === null || Buffer.isBuffer(body)) return undefined;
  try {
    if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) return undefined;
    const text = STRICT_UTF8.decode(raw);
    if (storableJsonText(text) !== text) return undefined;
    const bodyText = JSON.stringify(body);
    // Compact JSON (what most senders send) is the body's own JSON text: no parse needed.
    if (text === bodyText) return { rest };
    return JSON.stringify(JSON.parse(text)) === bodyText ? { rest } : undefined;
  } catch {
    return undefined;
  }
}

export function eventRows(note: EventNote): NoteRows {
  const { origin, deliveries } = note;
  const inRaw = bodyInRaw(note);
  const payload = inRaw === undefined ? (note.payload ?? null) : inRaw.rest;
  const one = deliveries.length === 1 ? deliveries[0] : undefined;
  // Strings are kept as they are (they cannot change); objects are encoded now.
  const row: EventRow = {
    id: note.id,
    receivedAt: note.receivedAt,
    source: origin.kind === "webhook" ? origin.source : null,
    queue: origin.kind === "queue" ? origin.queue : null,
    name: note.name ?? null,
    parentId: note.parentId ?? null,
    replayOf: note.replayOf ?? null,
    traceId: note.traceId ?? null,
    task: one === undefined ? null : one.task,
    queue1: one === undefined ? null : one.queue,
    messageId: one === undefined ? null : one.messageId,
    tasks: one === undefined ? arrayLiteral(deliveries.map((d) => d.task)) : null,
    queues: one === undefined ? arrayLiteral(deliveries.map((d) => d.queue)) : null,
    messageIds: one === undefined ? arrayLiteral(deliveries.map((d) => d.messageId)) : null,
    payload: payload === null ? null : storableJsonText(jsonText(payload)),
    raw: note.raw === undefined ? null : note.raw.toString("base64"),
    bodyFromRaw: inRaw !== undefined,
  };
  let size = 120 + row.id.length + (row.payload?.length ?? 0) + (row.raw?.length ?? 0);
  for (const d of deliveries) size += d.task.length + d.queue.length + d.messageId.length + 8;
  return { events: [row], runs: NONE, size };
}

export function runRows(note: RunNote): NoteRows {
  const { run } = note;
  const row: RunRow = {
    eventId: note.eventId,
    task: run.task,
    attempt: run.attempt,
    startedAt: run.startedAt,
    durationMs: run.durationMs,
    outcome: run.outcome,
    status: STATUS_CODES[note.status] ?? STATUS_CODES.pending,
    errorType: run.error?.type ?? null,
    errorMessage: run.error?.message ?? null,
    errorStack: run.error?.stack ?? null,
    emitted1: run.emitted?.length === 1 ? run.emitted[0] : null,
    emitted: run.emitted === undefined || run.emitted.length === 1 ? null : arrayLiteral(run.emitted),
  };
  const size = 80 + row.eventId.length + row.task.length + (row.errorMessage?.length ?? 0) + (row.errorStack?.length ?? 0) + (row.emitted1?.length ?? 0) + (row.emitted?.length ?? 0);
  return { events: NONE, runs: [row], size };
}
