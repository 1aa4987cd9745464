import { Packr } from "msgpackr";
import { PAYLOAD_ENCODING, unpackKeepingProto } from "../payload-codec";
import type { DeadLetter, QueuedMessage } from "../store";
import { keyFromStored, storableText, storedKey } from "./storable-text";

/*
 * How messages are written to rows. The payload is MessagePack (msgpackr, plain maps, as the
 * embedded store writes it): Buffers, Dates and nested values read back as they went in. The
 * request's raw bytes go to their own bytea column, once; with `bodyFromRaw` the parsed body is
 * left out of the payload (the task's source rebuilds it from the raw bytes). Optional fields
 * are NULL when absent and left out when read back, so a message reads back as it was given.
 */

const packr = new Packr(PAYLOAD_ENCODING);

/** A copy: msgpackr hands back a view into a buffer it reuses, and a query may be sent later. */
export function pack(value: unknown): Buffer {
  return Buffer.from(packr.pack(value));
}

export function unpack(bytes: Buffer): unknown {
  return unpackKeepingProto(bytes, (b) => packr.unpack(b));
}

/** Columns of a message row, in the order `messageValues` gives them. */
export const MESSAGE_COLUMNS = [
  "queue",
  "id",
  "payload",
  "raw",
  "attempts",
  "enqueued_at",
  "last_error",
  "body_from_raw",
  "ordering_key",
  "trace_context",
  "visible_at",
  "concurrency_key",
  "rate_key",
  "group_key",
] as const;

/** Casts for the columns, for statements whose parameters PostgreSQL cannot type by itself (VALUES lists). */
export const MESSAGE_CASTS = ["text", "text", "bytea", "bytea", "integer", "double precision", "text", "boolean", "text", "jsonb", "bigint", "text", "text", "text"] as const;

/** A message encoded for a row; `bytes` is its rough size, for batch limits. */
export interface EncodedMessage {
  readonly values: unknown[];
  readonly bytes: number;
}

/** Longest message id (and stored ordering key), in UTF-8 bytes, that fits the indexes on (queue, id), (queue, ordering_key, seq) and the dead letters' id. */
export const MAX_ID_BYTES = 2_000;

/** Encodes a message for `queue`; throws when its payload cannot be encoded (a cycle, a function...). */
export function encodeMessage(queue: string, message: QueuedMessage, visibleAt = 0, lean = true): EncodedMessage {
  // Refused here, alone: in a batch's statement it would fail every row of the batch.
  if (message.id.includes("\u0000")) throw new Error("the message id holds the character U+0000, which PostgreSQL text cannot store");
  // Claims and dead letters index the id; a B-tree entry holds 2,704 bytes at most, so a longer
  // id (that does not compress) would fail every claim of its queue, not only its own.
  const idBytes = Buffer.byteLength(message.id);
  if (idBytes > MAX_ID_BYTES) throw new Error(`the message id is ${idBytes} bytes long; PostgreSQL indexes ids of at most ${MAX_ID_BYTES} bytes`);
  const orderingKey = message.orderingKey === undefined ? null : storedKey(message.orderingKey);
  // Indexed too, with the queue: refused alone rather than failing the batch's statement.
  for (const key of [message.concurrencyKey, message.rateKey, message.groupKey]) {
    if (key !== undefined && Buffer.byteLength(storedKey(key)) > MAX_ID_BYTES) throw new Error(`a flow key is ${Buffer.byteLength(storedKey(key))} bytes long as stored; PostgreSQL indexes keys of at most ${MAX_ID_BYTES} bytes`);
  }
  if (orderingKey !== null && Buffer.byteLength(orderingKey) > MAX_ID_BYTES) {
    throw new Error(`the ordering key is ${Buffer.byteLength(orderingKey)} bytes long as stored; PostgreSQL indexes keys of at most ${MAX_ID_BYTES} bytes`);
  }
  const payload = pack(lean ? leanPayload(message) : message.payload);
  const values = [
    queue,
    message.id,
    payload,
    message.raw ?? null,
    message.attempts,
    message.enqueuedAt,
    storableText(message.lastError) ?? null,
    message.bodyFromRaw === true,
    orderingKey,
    message.traceContext === undefined ? null : JSON.stringify(message.traceContext),
    // A delayed message (ctx.emit with a delay) is due at its time, as a retry is.
    visibleAt === 0 && message.runAt !== undefined ? Math.max(1, Math.floor(message.runAt)) : visibleAt,
    message.concurrencyKey === undefined ? null : storedKey(message.concurrencyKey),
    message.rateKey === undefined ? null : storedKey(message.rateKey),
    message.groupKey === undefined ? null : storedKey(message.groupKey),
  ];
  return { values, bytes: payload.length + (message.raw?.length ?? 0) + message.id.length + 64 };
}

/** The payload to store: without its parsed body when the raw bytes can give it back. */
function leanPayload(message: QueuedMessage): unknown {
  const { payload } = message;
  if (!message.bodyFromRaw || message.raw === undefined || typeof payload !== "object" || payload === null || !("body" in payload)) return payload;
  const { body: _rebuiltFromRaw, ...rest } = payload as Record<string, unknown>;
  return rest;
}

/** A message read back from a row of `messages` (or the message part of a `dead_letters` row). */
export function decodeMessage(row: Record<string, unknown>, attemptsColumn = "attempts"): QueuedMessage {
  const out: { -readonly [K in keyof QueuedMessage]: QueuedMessage[K] } = {
    id: row.id as string,
    payload: unpack(row.payload as Buffer),
    attempts: Number(row[attemptsColumn]),
    enqueuedAt: Number(row.enqueued_at),
  };
  if (row.raw !== null && row.raw !== undefined) out.raw = row.raw as Buffer;
  if (row.last_error !== null && row.last_error !== undefined) out.lastError = row.last_error as string;
  if (row.body_from_raw === true) out.bodyFromRaw = true;
  if (row.ordering_key !== null && row.ordering_key !== undefined) out.orderingKey = keyFromStored(row.ordering_key as string);
  if (row.trace_context !== null && row.trace_context !== undefined) out.traceContext = row.trace_context as Record<string, string>;
  // A dead letter keeps its flow groups, so that a replay counts against the same limits.
  if (typeof row.concurrency_key === "string") out.concurrencyKey = keyFromStored(row.concurrency_key);
  if (typeof row.rate_key === "string") out.rateKey = keyFromStored(row.rate_key);
  // And its debounce or batch group, so that a replay joins the task's groups again.
  if (typeof row.group_key === "string") out.groupKey = keyFromStored(row.group_key);
  return out;
}

/** Columns of a dead letter row, in the order `deadLetterValues` gives them. */
export const DEAD_LETTER_COLUMNS = [
  "id",
  "queue",
  "task",
  "error",
  "attempts",
  "died_at",
  "payload",
  "raw",
  "message_attempts",
  "enqueued_at",
  "last_error",
  "body_from_raw",
  "ordering_key",
  "trace_context",
  "concurrency_key",
  "rate_key",
  "group_key",
] as const;

/** A dead letter keeps its payload whole (body included): it is shown where no source can rebuild it. */
export function deadLetterValues(letter: DeadLetter): unknown[] {
  const { message } = letter;
  return [
    message.id,
    letter.queue,
    letter.task,
    storableText(letter.error),
    letter.attempts,
    letter.diedAt,
    pack(message.payload),
    message.raw ?? null,
    message.attempts,
    message.enqueuedAt,
    storableText(message.lastError) ?? null,
    message.bodyFromRaw === true,
    message.orderingKey === undefined ? null : storedKey(message.orderingKey),
    message.traceContext === undefined ? null : JSON.stringify(message.traceContext),
    message.concurrencyKey === undefined ? null : storedKey(message.concurrencyKey),
    message.rateKey === undefined ? null : storedKey(message.rateKey),
    message.groupKey === undefined ? null : storedKey(message.groupKey),
  ];
}

export function decodeDeadLetter(row: Record<string, unknown>): DeadLetter {
  return {
    queue: row.queue as string,
    message: decodeMessage(row, "message_attempts"),
    task: row.task as string,
    error: row.error as string,
    attempts: Number(row.attempts),
    diedAt: Number(row.died_at),
  };
}

/** `$1, $2, ...` placeholders for rows of `width` values, with casts, starting after `offset` parameters. */
export function valuesList(rows: number, casts: readonly string[], offset = 0): string {
  const width = casts.length;
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const cells: string[] = [];
    for (let c = 0; c < width; c++) cells.push(`$${offset + r * width + c + 1}::${casts[c]}`);
    out.push(`(${cells.join(", ")})`);
  }
  return out.join(", ");
}
