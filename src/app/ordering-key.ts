import { createHash } from "node:crypto";
import { errorMessage } from "../util/logger";

/** A task's key function: the event (or emitted value) in, its ordering key out (undefined: none). */
export type OrderingKeyFn<E = unknown> = (event: E) => string | undefined;

/** Longest ordering key kept as given, in UTF-8 bytes; longer keys are replaced by their SHA-256. */
export const MAX_ORDERING_KEY_BYTES = 200;

/**
 * A task's key function (orderingKey, concurrency.key, rateLimit.key) threw, or returned something that is not a key. The event is
 * not stored: a webhook is answered 500 (the sender retries), an emitted value fails the task
 * that emitted it (retried, then a dead letter).
 */
export class OrderingKeyError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "OrderingKeyError";
  }
}

/**
 * Runs a task's key function on the value entering its queue. `undefined` and `null` mean "no
 * key"; a string is the key (an empty string is a key like any other); anything else, or a
 * throw, is an OrderingKeyError. Keys longer than MAX_ORDERING_KEY_BYTES are hashed, so that
 * stores index them cheaply; equal keys still hash alike.
 */
export function computeOrderingKey(fn: OrderingKeyFn<never>, value: unknown, task: string, option = "orderingKey"): string | undefined {
  let key: unknown;
  try {
    key = (fn as OrderingKeyFn<unknown>)(value);
  } catch (error) {
    throw new OrderingKeyError(`task "${task}": ${option} threw: ${errorMessage(error)}`, { cause: error });
  }
  if (key === undefined || key === null) return undefined;
  if (typeof key !== "string") {
    const what = isThenable(key) ? "a Promise (it must be synchronous)" : `a ${typeof key}`;
    throw new OrderingKeyError(`task "${task}": ${option} returned ${what}; it must return a string, or undefined for no key`);
  }
  return boundedKey(key);
}

/** The key as stored: itself when short enough, else "sha256:" and its digest. */
export function boundedKey(key: string): string {
  if (key.length <= MAX_ORDERING_KEY_BYTES / 3 || Buffer.byteLength(key) <= MAX_ORDERING_KEY_BYTES) return key;
  return `sha256:${createHash("sha256").update(key).digest("base64url")}`;
}

function isThenable(value: unknown): boolean {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
