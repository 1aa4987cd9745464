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

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A webhook payload's body, when it is exactly what its raw bytes parse to as JSON (the usual
 * JSON webhook): the payload is then stored without it, and the body read back from the bytes.
 * The bytes must be UTF-8 and hold nothing jsonb refuses, so that the database can read them
 * as JSON too (a body field search).
 */
function bodyInRaw(note: EventNote): { readonly rest: Record<string, unknown> } | undefined {
  const { payload, raw } = note;
  if (raw === undefined || note.origin.kind !== "webhook" || typeof payload !== "object" || payload === null || Array.isArray(payload)) return undefined;
  const { body, ...rest } = payload as Record<string, unknown>;
  if (typeof body !== "object" || body === null || Buffer.isBuffer(body)) return undefined;
  try {
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
  const { origin } = note;
  const inRaw = bodyInRaw(note);
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
    b: inRaw !== undefined,
  });
  const payload = inRaw === undefined ? (note.payload ?? null) : inRaw.rest;
  const row = storableJsonText(`${head.slice(0, -1)},"payload":${jsonText(payload)}}`);
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
