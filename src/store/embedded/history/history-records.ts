import { isDeepStrictEqual } from "node:util";
import { charsetOf } from "../../../sources/webhook/content-type";
import { modeFor, parseBody } from "../../../sources/webhook/parse-body";
import { Packr } from "msgpackr";
import { worstStatus } from "../../history-query";
import { PAYLOAD_ENCODING } from "../../payload-codec";
import type { DeliveryNote, DeliveryStatus, DeliveryView, EventNote, EventOrigin, EventSummary, RunOutcome, RunRecord } from "../../history";

/**
 * What the history writes, kept small: every event costs a summary, an index entry and a body,
 * and each run one row. Arrays and one-letter keys (MessagePack writes map keys in full), what
 * can be derived left out (a delivery's usual queue and message id, a body its raw bytes rebuild).
 */

export type TimelineKey = [receivedAt: number, id: string];
/** A run noted before its event: [eventId, n]. */
export type EarlyKey = [eventId: string, n: number];
/** writer: the tag of the process that counted (see applyNotes). */
export type ActivityKey = [bucketStart: number, task: string, source: string, writer: string];
/** received, succeeded, failed, dead, pending. */
export type ActivityCounts = [number, number, number, number, number];
/** The event's receivedAt: where its summary sits in the timeline. */
export type IndexRecord = number;

const STATUS_CODES: readonly DeliveryStatus[] = ["pending", "succeeded", "failed", "dead"];

export function statusCode(status: DeliveryStatus): number {
  const code = STATUS_CODES.indexOf(status);
  return code === -1 ? 0 : code;
}

export function statusOf(code: number): DeliveryStatus {
  return STATUS_CODES[code] ?? "pending";
}

/** Index of a status in ActivityCounts. */
export function countSlot(code: number): 1 | 2 | 3 | 4 {
  return code === 0 ? 4 : (code as 1 | 2 | 3);
}

/**
 * One delivery: [task, status, attempts, lastError?, queue?, messageId?]. The queue is left out
 * when it is the usual one (`webhook:<task>`, or the queue the event came from); the message id
 * when it is the event id (one delivery) or `<id>@<task>` (several).
 */
export type DeliveryRecord = [task: string, status: number, attempts: number, lastError?: string | null, queue?: string | null, messageId?: string | null];

export interface SummaryRecord {
  /** Source label (webhook) or queue name. */
  o: string;
  /** 1 when the origin is a queue. */
  q?: 1;
  n?: string;
  d: DeliveryRecord[];
  pa?: string;
  ro?: string;
  /** Runs, oldest first. */
  u: RunRow[];
  /** Ids of its children (events its runs emitted) and replays, as noted (reads keep those still kept, oldest first). */
  c?: string[];
  y?: string[];
  /**
   * The BodyRecord, MessagePack-encoded apart: reading a summary (lists, filters, a run's
   * update) copies these bytes without parsing the payload.
   */
  b: Buffer;
}

export interface BodyRecord {
  /** The payload; a webhook event's `body` left out when `b` says the raw bytes rebuild it. */
  p: unknown;
  r?: Buffer;
  b?: 1;
  t?: string;
}

/** A run whose event is not written yet, and the status it left its delivery in. */
export type EarlyRun = [RunRow, number];

/** [task, attempt, startedAt, durationMs, outcome, errorType?, errorMessage?, stack?, emitted?] */
export type RunRow = [string, number, number, number, RunOutcome, (string | null)?, (string | null)?, (string | null)?, (readonly string[] | null)?];

/** A webhook task's queue, or the queue the event came from (`<queue>@<task>` when it feeds several tasks). */
function usualQueue(origin: EventOrigin, task: string, several: boolean): string {
  if (origin.kind === "webhook") return `webhook:${task}`;
  return several ? `${origin.queue}@${task}` : origin.queue;
}

function usualMessageId(id: string, task: string, several: boolean): string {
  return several ? `${id}@${task}` : id;
}

export function summaryRecord(note: EventNote): SummaryRecord {
  const several = note.deliveries.length > 1;
  const record: SummaryRecord = {
    o: note.origin.kind === "webhook" ? note.origin.source : note.origin.queue,
    d: note.deliveries.map((d) => deliveryRecord(note, d, several)),
    u: [],
    b: encodeBody(bodyRecord(note)),
  };
  if (note.origin.kind === "queue") record.q = 1;
  if (note.name !== undefined) record.n = note.name;
  if (note.parentId !== undefined) record.pa = note.parentId;
  if (note.replayOf !== undefined) record.ro = note.replayOf;
  return record;
}

function deliveryRecord(note: EventNote, d: DeliveryNote, several: boolean): DeliveryRecord {
  const queue = d.queue === usualQueue(note.origin, d.task, several) ? null : d.queue;
  const messageId = d.messageId === usualMessageId(note.id, d.task, several) ? null : d.messageId;
  const record: DeliveryRecord = [d.task, 0, 0];
  if (queue !== null || messageId !== null) record.push(null, queue, messageId);
  return trimNulls(record);
}

function trimNulls<T extends unknown[]>(row: T): T {
  while (row.length > 0 && (row[row.length - 1] === null || row[row.length - 1] === undefined)) row.pop();
  return row;
}

export function originOf(record: SummaryRecord): EventOrigin {
  return record.q === 1 ? { kind: "queue", queue: record.o } : { kind: "webhook", source: record.o };
}

export function deliveryViews(id: string, record: SummaryRecord): DeliveryView[] {
  const origin = originOf(record);
  const several = record.d.length > 1;
  return record.d.map(([task, status, attempts, lastError, queue, messageId]) => {
    const view: { -readonly [K in keyof DeliveryView]: DeliveryView[K] } = {
      task,
      queue: queue ?? usualQueue(origin, task, several),
      messageId: messageId ?? usualMessageId(id, task, several),
      status: statusOf(status),
      attempts,
    };
    if (lastError !== undefined && lastError !== null) view.lastError = lastError;
    return view;
  });
}

export function summaryOf(id: string, receivedAt: number, record: SummaryRecord): EventSummary {
  const deliveries = deliveryViews(id, record);
  const summary: { -readonly [K in keyof EventSummary]: EventSummary[K] } = {
    id,
    origin: originOf(record),
    receivedAt,
    status: worstStatus(deliveries.map((d) => d.status)),
    deliveries,
  };
  if (record.n !== undefined) summary.name = record.n;
  if (record.pa !== undefined) summary.parentId = record.pa;
  if (record.ro !== undefined) summary.replayOf = record.ro;
  return summary;
}

/**
 * The payload to write: a webhook event's parsed body is left out when parsing its raw bytes
 * the usual way gives it back (the raw bytes are kept anyway), so the body's bytes are written once.
 */
export function bodyRecord(note: EventNote): BodyRecord {
  const record: BodyRecord = { p: note.payload };
  if (note.raw !== undefined) {
    record.r = note.raw;
    const payload = note.payload;
    if (note.origin.kind === "webhook" && isObject(payload) && "body" in payload && rebuildsBody(payload, note.raw)) {
      const { body: _body, ...rest } = payload;
      record.p = rest;
      record.b = 1;
    }
  }
  if (note.traceId !== undefined) record.t = note.traceId;
  return record;
}

/**
 * Whether parsing `raw` as a source does by default gives `payload.body` back. A JSON body (the
 * common case) is compared by a walk of its own, several times faster than isDeepStrictEqual.
 */
function rebuildsBody(payload: Record<string, unknown>, raw: Buffer): boolean {
  try {
    const contentType = contentTypeOf(payload);
    const charset = contentType === undefined ? undefined : charsetOf(contentType);
    if (modeFor(contentType) === "json" && (charset === undefined || charset === "utf-8" || charset === "utf8")) {
      const text = raw.toString("utf8");
      return sameJson(JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text), payload.body);
    }
    return isDeepStrictEqual(parseBody("auto", raw, contentType), payload.body);
  } catch {
    return false;
  }
}

/** Equality of two values JSON.parse could have made (plain objects, arrays, strings, numbers, booleans, null). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(b, key) || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

const bodyPackr = new Packr(PAYLOAD_ENCODING);

/** A copy: msgpackr hands back a view into a buffer it reuses. */
function encodeBody(record: BodyRecord): Buffer {
  return Buffer.from(bodyPackr.pack(record));
}

export function decodeBody(bytes: Buffer | Uint8Array): BodyRecord {
  return bodyPackr.unpack(bytes) as BodyRecord;
}

/** The payload as the note gave it. */
export function payloadOf(record: BodyRecord): unknown {
  if (record.b !== 1 || record.r === undefined || !isObject(record.p)) return record.p;
  let body: unknown;
  try {
    body = parseBody("auto", record.r, contentTypeOf(record.p));
  } catch {
    body = null; // it parsed when written: only a changed parser could fail here
  }
  return { body, ...record.p };
}

function contentTypeOf(payload: Record<string, unknown>): string | undefined {
  const headers = payload.headers;
  if (!isObject(headers)) return undefined;
  const value = headers["content-type"];
  return typeof value === "string" ? value : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

export function runRow(run: RunRecord): RunRow {
  const row: RunRow = [run.task, run.attempt, run.startedAt, run.durationMs, run.outcome];
  if (run.error !== undefined || run.emitted !== undefined) {
    row.push(run.error?.type ?? null, run.error?.message ?? null, run.error?.stack ?? null, run.emitted !== undefined && run.emitted.length > 0 ? run.emitted : null);
  }
  return trimNulls(row);
}

export function runOf(row: RunRow): RunRecord {
  const [task, attempt, startedAt, durationMs, outcome, type, message, stack, emitted] = row;
  const run: { -readonly [K in keyof RunRecord]: RunRecord[K] } = { task, attempt, startedAt, durationMs, outcome };
  if (type !== undefined && type !== null) {
    run.error = stack !== undefined && stack !== null ? { type, message: message ?? "", stack } : { type, message: message ?? "" };
  }
  if (emitted !== undefined && emitted !== null) run.emitted = emitted;
  return run;
}
