import type { DeadLetter, QueuedMessage } from "../store";
import { storedForm } from "../payload-codec";

/*
 * What is written to disk. Values are MessagePack (lmdb's default encoding), which keeps
 * Buffers (`raw`, and Buffers inside payloads) byte for byte. MessagePack also keeps a
 * property whose value is `undefined`, so optional fields are left out rather than written
 * empty: a message reads back exactly as it was given.
 */

export type MessageRecord = QueuedMessage;

export interface StateRecord {
  /** The value. */
  readonly v: unknown;
  /** Expiry, ms since the epoch; absent for values without a time-to-live. */
  readonly e?: number;
}

export function messageRecord(message: QueuedMessage): MessageRecord {
  return record(message, true);
}

/** A message as the journal writes it: the record without `raw`, whose bytes follow it as they are. */
export function messageMeta(message: QueuedMessage): Omit<MessageRecord, "raw"> {
  return record(message, true, false);
}

/**
 * What is written for a message. With `bodyFromRaw`, the payload's parsed `body` is left out
 * when `lean` (the raw bytes are the body, once); dead letters keep it, so that they read
 * complete wherever they are shown.
 */
function record(message: QueuedMessage, lean: boolean, withRaw = true): MessageRecord {
  let payload = message.payload;
  if (lean && message.bodyFromRaw && message.raw !== undefined && typeof payload === "object" && payload !== null && "body" in payload) {
    const { body: _rebuiltFromRaw, ...rest } = payload as Record<string, unknown>;
    payload = rest;
  }
  const out: { -readonly [K in keyof QueuedMessage]: QueuedMessage[K] } = {
    id: message.id,
    payload,
    attempts: message.attempts,
    enqueuedAt: message.enqueuedAt,
  };
  if (withRaw && message.raw !== undefined) out.raw = message.raw;
  if (message.lastError !== undefined) out.lastError = message.lastError;
  if (message.bodyFromRaw) out.bodyFromRaw = true;
  if (message.orderingKey !== undefined) out.orderingKey = message.orderingKey;
  if (message.traceContext !== undefined) out.traceContext = message.traceContext;
  if (message.concurrencyKey !== undefined) out.concurrencyKey = message.concurrencyKey;
  if (message.rateKey !== undefined) out.rateKey = message.rateKey;
  if (message.groupKey !== undefined) out.groupKey = message.groupKey;
  return out;
}

export function deadLetterRecord(letter: DeadLetter): DeadLetter {
  return {
    queue: letter.queue,
    message: record(letter.message, false),
    task: letter.task,
    error: letter.error,
    attempts: letter.attempts,
    diedAt: letter.diedAt,
  };
}

/** The message a replay puts back: a fresh start, without the old attempts and error. */
export function replayedMessage(message: QueuedMessage): QueuedMessage {
  return messageRecord({ ...message, attempts: 0, lastError: undefined });
}

/** The value in the form every engine keeps (payload-codec); throws UnstorableValueError for what none can. */
export function stateRecord(value: unknown, expiresAt: number | undefined): StateRecord {
  const v = storedForm(value, "state");
  return expiresAt === undefined ? { v } : { v, e: expiresAt };
}

export function isLive(record: StateRecord | undefined, now: number): record is StateRecord {
  return record !== undefined && (record.e === undefined || record.e > now);
}
