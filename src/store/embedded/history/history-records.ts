import { eventStatus } from "../../history-query";
import { bodyRecord, encodeBody } from "./history-body";
import type { DeliveryNote, DeliveryStatus, DeliveryView, EventNote, EventOrigin, EventSummary, RunOutcome, RunRecord } from "../../history";

/**
 * What the history writes, kept small: an event is one record (its summary, its runs, and its
 * payload encoded apart) and an index entry. Arrays and one-letter keys (MessagePack writes map
 * keys in full); what can be derived is left out (a delivery's usual queue and message id, a
 * body its raw bytes rebuild: see history-body.ts).
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
    status: eventStatus(originOf(record), deliveries),
    deliveries,
  };
  if (record.n !== undefined) summary.name = record.n;
  if (record.pa !== undefined) summary.parentId = record.pa;
  if (record.ro !== undefined) summary.replayOf = record.ro;
  return summary;
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
