import { createHash, randomBytes } from "node:crypto";

/*
 * Key layouts. lmdb's ordered-binary keys sort arrays element by element (numbers before
 * strings), so every queue is one contiguous range ordered by its sequence number, and a
 * queue's due retries are one range ordered by time. Nothing has to be held in memory to
 * find the next message: a range scan from the queue's start finds it.
 */

/** A waiting message: FIFO by `seq`; `writer` keeps two processes (app + CLI) from ever colliding. */
export type ReadyKey = [queue: string, seq: number, writer: string];

/** A message waiting for a retry: ordered by the time it becomes visible again. */
export type DelayedKey = [queue: string, visibleAt: number, seq: number, writer: string];

/** An ordering key with a message in the queue (its head, in `ready` or `delayed`). */
export type HeadKey = [queue: string, orderingKey: string];

/** A message held back behind the head of its ordering key: in arrival order per key. */
export type BlockedKey = [queue: string, orderingKey: string, seq: number, writer: string];

export type StateKey = [namespace: string, key: string];

/** Index of state entries with a time-to-live, swept in time order. */
export type ExpiryKey = [expiresAt: number, namespace: string, key: string];

/** Where a message sits in the store: one of the B-tree's databases, or the journal. */
export type Location =
  | { readonly in: "ready"; readonly key: ReadyKey; readonly orderingKey?: string; readonly groupKey?: string }
  | { readonly in: "delayed"; readonly key: DelayedKey; readonly orderingKey?: string; readonly groupKey?: string }
  | { readonly in: "journal"; readonly entryId: number };

/** A tag unique to one opening of the store, so concurrent writers never pick the same key. */
export function newWriterTag(): string {
  return randomBytes(6).toString("base64url");
}

/** Range of a queue's waiting messages from `seq` on. Infinity sorts after every number. */
export function readyRange(queue: string, fromSeq: number): { start: [string, number]; end: [string, number] } {
  return { start: [queue, fromSeq], end: [queue, Infinity] };
}

/** Range of a queue's retries visible at `now` (inclusive). */
export function dueRange(queue: string, now: number): { start: [string]; end: [string, number, number] } {
  return { start: [queue], end: [queue, now, Infinity] };
}

/** Range of all a queue's retries, visible or not. */
export function queueDelayedRange(queue: string): { start: [string]; end: [string, number] } {
  return { start: [queue], end: [queue, Infinity] };
}

/** Range of a queue's retries not yet visible at `now`, the earliest first (one is enough). */
export function laterRange(queue: string, now: number): { start: [string, number, number]; end: [string, number]; limit: number } {
  return { start: [queue, now, Infinity], end: [queue, Infinity], limit: 1 };
}

/**
 * Whether a part of a composite lmdb key would read back cut apart: lmdb escapes the characters
 * U+0000-U+0004 (U+0000 separates a key's parts) only in strings under 64 characters; in a
 * longer one they are written as they are. Such a part is stored as its digest instead.
 */
function cutWhenRead(part: string): boolean {
  return part.length >= 64 && /[\u0000-\u0004]/.test(part);
}

function digestOf(part: string): string {
  return `\u0001sha256:${createHash("sha256").update(part).digest("base64url")}`;
}

/**
 * An ordering key as the `heads` and `blocked` keys hold it: one that would read back cut apart
 * (see cutWhenRead; the line's next message was then lost, or handed out again and again) is
 * replaced by its digest (at most 200 bytes: longer ones were hashed); equal keys still give
 * equal digests.
 */
export function lineKey(orderingKey: string): string {
  return cutWhenRead(orderingKey) ? digestOf(orderingKey) : orderingKey;
}

/** The first message held back behind `orderingKey`'s head, if any. */
export function blockedRange(queue: string, orderingKey: string): { start: [string, string]; end: [string, string, number]; limit: number } {
  return { start: [queue, orderingKey], end: [queue, orderingKey, Infinity], limit: 1 };
}

/** lmdb keys are at most ~2 KB; longer state keys (say, a huge header used as a marker) are hashed. */
const LONG_KEY_BYTES = 512;

/**
 * A state entry's key. Hashed when too long, or when it would read back cut apart (see
 * cutWhenRead): the expiry sweep, which finds entries by reading the index's keys, could then
 * remove neither the entry nor its index key, and a thousand such keys kept it looping.
 */
export function stateKey(namespace: string, key: string): StateKey {
  if (Buffer.byteLength(namespace) + Buffer.byteLength(key) <= LONG_KEY_BYTES && !cutWhenRead(key)) return [namespace, key];
  return [namespace, digestOf(key)];
}

/**
 * The key of a dead letter: its message id, hashed when too long for an lmdb key. A dead letter
 * whose id did not fit failed its write every time, and its message ran for ever.
 */
export function deadLetterKey(id: string): string {
  return Buffer.byteLength(id) <= LONG_KEY_BYTES ? id : digestOf(id);
}

export function isReadyKey(key: unknown): key is ReadyKey {
  return Array.isArray(key) && key.length === 3 && typeof key[0] === "string" && typeof key[1] === "number" && typeof key[2] === "string";
}

export function isBlockedKey(key: unknown): key is BlockedKey {
  return (
    Array.isArray(key) &&
    key.length === 4 &&
    typeof key[0] === "string" &&
    typeof key[1] === "string" &&
    typeof key[2] === "number" &&
    typeof key[3] === "string"
  );
}

export function isDelayedKey(key: unknown): key is DelayedKey {
  return (
    Array.isArray(key) &&
    key.length === 4 &&
    typeof key[0] === "string" &&
    typeof key[1] === "number" &&
    typeof key[2] === "number" &&
    typeof key[3] === "string"
  );
}
