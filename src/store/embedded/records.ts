import type { DeadLetter, QueuedMessage } from "../store";

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
  const record: { -readonly [K in keyof QueuedMessage]: QueuedMessage[K] } = {
    id: message.id,
    payload: message.payload,
    attempts: message.attempts,
    enqueuedAt: message.enqueuedAt,
  };
  if (message.raw !== undefined) record.raw = message.raw;
  if (message.lastError !== undefined) record.lastError = message.lastError;
  return record;
}

export function deadLetterRecord(letter: DeadLetter): DeadLetter {
  return {
    queue: letter.queue,
    message: messageRecord(letter.message),
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

export function stateRecord(value: unknown, expiresAt: number | undefined): StateRecord {
  return expiresAt === undefined ? { v: value } : { v: value, e: expiresAt };
}

export function isLive(record: StateRecord | undefined, now: number): record is StateRecord {
  return record !== undefined && (record.e === undefined || record.e > now);
}
