import type { DeliveryNote, DeliveryStatus, EventNote, EventOrigin, RunNote, RunOutcome, RunRecord } from "../history";
import { exactForm } from "../payload-codec";
import { parseBody } from "../../sources/webhook/parse-body";
import { valueBytes } from "./heap-bytes";
import { EVENT_RECORD, FRAME_BYTES, RUN_RECORD, type HistoryLog, type LogSegment } from "./history-log";
import { readPlain, writePlain } from "./plain-bytes";
import { RecordReader, RecordWriter } from "./record-bytes";

/**
 * The memory history's records, as its log holds them (see history-log.ts), written when noted
 * so that no one holding the note's objects changes what is kept.
 *
 * An event: [receivedAt][id][origin][parentId][replayOf] (what a read indexes it by), then
 * [name][traceId][deliveries], then [raw bytes][payload]. A webhook body its raw bytes give
 * back is not written: it is parsed from them again when read. A run: [eventId][status]
 * [outcome][attempt][startedAt][durationMs][task][error][emitted].
 *
 * A payload that is not plain data (a Date, a Buffer, -0, deeper than 64 levels) is kept as
 * an object beside the record, copied as exactForm copies it, as is a run with unusual fields.
 */

/** Notes are written here first, then copied into the log at once. */
const shared = new RecordWriter();
/** Whether `shared` holds a note being written (a payload's getter noting another one meanwhile gets a writer of its own). */
let busy = false;
/** Number of the next value kept beside its record. */
let nextAside = 1;

/** What the payload field holds. */
const PLAIN = 0;
const ASIDE = 1;
/** A length for "none". */
const NONE = 0xffffffff;

export function writeEvent(log: HistoryLog, note: EventNote): void {
  write(log, EVENT_RECORD, note, encodeEvent);
}

export function writeRun(log: HistoryLog, note: RunNote): void {
  write(log, RUN_RECORD, note, encodeRun);
}

/**
 * Frames a record (its kind, its length once known) around what `encode` writes. The shared
 * writer serves one note at a time: a payload's getter noting another one meanwhile gets a
 * writer of its own.
 */
function write<N>(log: HistoryLog, kind: typeof EVENT_RECORD | typeof RUN_RECORD, note: N, encode: (log: HistoryLog, w: RecordWriter, note: N) => void): void {
  const w = busy ? new RecordWriter() : shared;
  if (w === shared) busy = true;
  try {
    w.reset();
    w.u8(kind);
    w.u32(0);
    encode(log, w, note);
  } finally {
    if (w === shared) busy = false;
  }
}

function encodeEvent(log: HistoryLog, w: RecordWriter, note: EventNote): void {
  w.f64(note.receivedAt);
  w.string(note.id);
  const { origin } = note;
  w.u8(origin.kind === "webhook" ? 0 : 1);
  w.string(origin.kind === "webhook" ? origin.source : origin.queue);
  w.string(note.parentId ?? null);
  w.string(note.replayOf ?? null);
  w.string(note.name ?? null);
  w.string(note.traceId ?? null);
  w.u32(note.deliveries.length);
  for (const d of note.deliveries) {
    w.string(d.task);
    w.string(d.queue);
    // Most copies are the event's own id: written as none.
    w.string(d.messageId === note.id ? null : d.messageId);
  }
  const raw = note.raw;
  const payload = note.payload;
  const fromRaw = note.bodyFromRaw === true && raw !== undefined && hasBody(payload);
  w.u8(fromRaw ? 1 : 0);
  if (raw === undefined) w.u32(NONE);
  else {
    w.u32(raw.length);
    w.copy(raw);
  }
  const payloadAt = w.at;
  w.u8(PLAIN);
  let aside: { readonly key: number; readonly value: unknown } | undefined;
  if (!writePlain(w, payload, 0, fromRaw ? "body" : undefined)) {
    w.at = payloadAt;
    w.u8(ASIDE);
    aside = { key: nextAside++, value: snapshot(fromRaw ? withoutBody(payload) : payload) };
    w.u32(aside.key);
  }
  keep(log, w, EVENT_RECORD, aside, aside === undefined ? 0 : valueBytes(aside.value, 0));
}

function encodeRun(log: HistoryLog, w: RecordWriter, note: RunNote): void {
  w.string(note.eventId);
  let aside: { readonly key: number; readonly value: unknown } | undefined;
  if (runIsPlain(note)) writeRunFields(w, note);
  else {
    w.u8(ASIDE);
    aside = { key: nextAside++, value: { status: note.status, run: snapshot(note.run) } };
    w.u32(aside.key);
  }
  keep(log, w, RUN_RECORD, aside, aside === undefined ? 0 : runErrorBytes(note) + 160);
}

function keep(log: HistoryLog, w: RecordWriter, kind: typeof EVENT_RECORD | typeof RUN_RECORD, aside: { readonly key: number; readonly value: unknown } | undefined, asideBytes: number): void {
  w.patchU32(1, w.at - FRAME_BYTES);
  const segment = log.append(kind, w, asideBytes);
  if (aside !== undefined) (segment.aside ??= new Map()).set(aside.key, aside.value);
}

/** What a read indexes an event by, and where the rest of its record starts. */
export interface EventHead {
  readonly id: string;
  readonly receivedAt: number;
  readonly origin: EventOrigin;
  readonly parentId: string | undefined;
  readonly replayOf: string | undefined;
  readonly segment: LogSegment;
  /** Where its name, trace id and deliveries start. */
  readonly detailsAt: number;
}

/** Reads an event record's head; `reader` is at the record's body. */
export function readEventHead(segment: LogSegment, reader: RecordReader): EventHead {
  const receivedAt = reader.f64();
  const id = reader.string()!;
  const kind = reader.u8();
  const name = reader.string()!;
  const origin: EventOrigin = kind === 0 ? { kind: "webhook", source: name } : { kind: "queue", queue: name };
  const parentId = reader.string() ?? undefined;
  const replayOf = reader.string() ?? undefined;
  return { id, receivedAt, origin, parentId, replayOf, segment, detailsAt: reader.at };
}

/** Reads the id of the event a run record is of; `reader` is at the record's body. */
export function readRunEventId(reader: RecordReader): string {
  return reader.string()!;
}

export interface EventDetails {
  readonly name: string | undefined;
  readonly traceId: string | undefined;
  readonly deliveries: DeliveryNote[];
}

export function readEventDetails(head: EventHead): EventDetails {
  return readDetails(head, new RecordReader(head.segment.buf, head.detailsAt));
}

function readDetails(head: EventHead, reader: RecordReader): EventDetails {
  const name = reader.string() ?? undefined;
  const traceId = reader.string() ?? undefined;
  const deliveries: DeliveryNote[] = [];
  for (let count = reader.u32(); count > 0; count--) {
    const task = reader.string()!;
    const queue = reader.string()!;
    deliveries.push({ task, queue, messageId: reader.string() ?? head.id });
  }
  return { name, traceId, deliveries };
}

/** The event's raw bytes (a copy) and its payload as noted, fresh objects: a body left out is parsed again from the raw bytes, as it arrived. */
export function readEventPayload(head: EventHead): { readonly raw: Buffer | undefined; readonly payload: unknown } {
  const { segment } = head;
  const reader = new RecordReader(segment.buf, head.detailsAt);
  readDetails(head, reader);
  const fromRaw = reader.u8() === 1;
  const rawLength = reader.u32();
  let raw: Buffer | undefined;
  if (rawLength !== NONE) {
    raw = Buffer.from(segment.buf.subarray(reader.at, reader.at + rawLength));
    reader.at += rawLength;
  }
  const stored = reader.u8() === PLAIN ? readPlain(reader) : snapshot(segment.aside!.get(reader.u32()));
  if (!fromRaw || raw === undefined) return { raw, payload: stored };
  const rest = stored as Record<string, unknown>;
  const headers = rest.headers as Record<string, unknown> | undefined;
  const contentType = typeof headers?.["content-type"] === "string" ? (headers["content-type"] as string) : undefined;
  let body: unknown;
  try {
    body = parseBody("auto", raw, contentType);
  } catch {
    body = null; // it parsed when it came in: only a changed parser could fail here
  }
  // A body read as raw bytes is the Buffer given: a copy of its own, not the event's `raw`.
  if (body === raw) body = Buffer.from(raw);
  return { raw, payload: { body, ...rest } };
}

/** Where a run's record lies. */
export interface RunPlace {
  readonly segment: LogSegment;
  /** Its body, past the event id. */
  readonly at: number;
}

/** A run as noted, a fresh object. */
export function readRun(eventId: string, place: RunPlace): RunNote {
  const { segment } = place;
  const reader = new RecordReader(segment.buf, place.at);
  if (reader.u8() === ASIDE) {
    const kept = segment.aside!.get(reader.u32()) as { readonly status: DeliveryStatus; readonly run: RunRecord };
    return { eventId, run: snapshot(kept.run) as RunRecord, status: kept.status };
  }
  const status = STATUSES[reader.u8()]!;
  const outcome = OUTCOMES[reader.u8()]!;
  const attempt = reader.f64();
  const startedAt = reader.f64();
  const durationMs = reader.f64();
  const task = reader.string()!;
  const run: { -readonly [K in keyof RunRecord]: RunRecord[K] } = { task, attempt, startedAt, durationMs, outcome };
  const type = reader.string();
  const message = reader.string();
  const stack = reader.string();
  // Written for a run with an error, whose type and message are strings.
  if (type !== null && message !== null) run.error = stack === null ? { type, message } : { type, message, stack };
  const count = reader.u32();
  if (count !== NONE) {
    const emitted: string[] = [];
    for (let i = 0; i < count; i++) emitted.push(reader.string()!);
    run.emitted = emitted;
  }
  return { eventId, run, status };
}

const STATUSES: readonly DeliveryStatus[] = ["pending", "succeeded", "failed", "dead"];
const OUTCOMES: readonly RunOutcome[] = ["success", "retry", "dead_letter", "timeout", "superseded"];
const RUN_KEYS = new Set(["task", "attempt", "startedAt", "durationMs", "outcome", "error", "emitted"]);

/** Whether a run is written as bytes: the fields RunRecord names, of their types, a status and an outcome the history knows. */
function runIsPlain(note: RunNote): boolean {
  const { run } = note;
  if (!STATUSES.includes(note.status) || !OUTCOMES.includes(run.outcome)) return false;
  for (const key in run) if (!RUN_KEYS.has(key)) return false;
  if (typeof run.attempt !== "number" || typeof run.startedAt !== "number" || typeof run.durationMs !== "number" || typeof run.task !== "string") return false;
  const error = run.error;
  if (error !== undefined) {
    if (typeof error !== "object" || error === null || typeof error.type !== "string" || typeof error.message !== "string") return false;
    if (!(error.stack === undefined || typeof error.stack === "string")) return false;
    for (const key in error) if (key !== "type" && key !== "message" && key !== "stack") return false;
  }
  if (run.emitted !== undefined) {
    if (!Array.isArray(run.emitted)) return false;
    for (const id of run.emitted) if (typeof id !== "string") return false;
  }
  return true;
}

function writeRunFields(w: RecordWriter, note: RunNote): void {
  const { run } = note;
  w.u8(PLAIN);
  w.u8(STATUSES.indexOf(note.status));
  w.u8(OUTCOMES.indexOf(run.outcome));
  w.f64(run.attempt);
  w.f64(run.startedAt);
  w.f64(run.durationMs);
  w.string(run.task);
  const error = run.error;
  w.string(error?.type ?? null);
  w.string(error?.message ?? null);
  w.string(error?.stack ?? null);
  if (run.emitted === undefined) w.u32(NONE);
  else {
    w.u32(run.emitted.length);
    for (const id of run.emitted) w.string(id);
  }
}

function runErrorBytes(note: RunNote): number {
  const error = note.run.error;
  // Unusual runs come here: an error may be anything (null, a string, an object without a message).
  if (typeof error !== "object" || error === null) return 0;
  return String(error.message).length + (typeof error.stack === "string" ? error.stack.length : 0);
}

/** Whether a payload is a webhook event's, with a body to leave out (its raw bytes give it back). */
function hasBody(payload: unknown): payload is Record<string, unknown> {
  return typeof payload === "object" && payload !== null && !Array.isArray(payload) && "body" in payload;
}

/** A webhook event's payload without its parsed body (the values are the payload's own). */
function withoutBody(payload: Record<string, unknown>): Record<string, unknown> {
  const { body: _fromRaw, ...rest } = payload;
  return rest;
}

/** The value as it is now (plain data copied exactly in one walk, anything else through the codec); as it is when it cannot be copied. */
export function snapshot(value: unknown): unknown {
  try {
    return exactForm(value, "payload");
  } catch {
    return value;
  }
}
