import type { QueuedMessage } from "../store";
import { messageRecord } from "./records";

/**
 * What a message costs while the embedded store keeps it in memory (the journal's lane, the
 * hand-off of fresh B-tree messages), and the form it is kept in.
 *
 * A webhook event arrives with its raw bytes and its parsed body: two copies of the body. Only
 * the raw bytes were counted, so memory was about twice the budget, and the hand-off, bounded
 * by a count alone, held 2,500 events of 1 MiB in 4.9 GiB. Now a large body is kept as raw
 * bytes only (its source parses them again when a task claims it, as after a restart), and a
 * small one keeps its parsed body and is counted as well, as parsed.
 */

/** Bodies up to this size keep their parsed form in memory: parsing again would cost more than it saves. */
export const KEEP_PARSED_BODY_MAX = 16 * 1024;

/** Rough bytes of what a message holds besides its raw bytes: headers, query, an emitted value. */
const FIXED_COST = 256;

/** The form a message is kept in: without its parsed body when that body is large. */
export function heldForm(message: QueuedMessage): QueuedMessage {
  const raw = message.raw;
  if (raw === undefined || raw.length <= KEEP_PARSED_BODY_MAX || !hasParsedBody(message)) return message;
  return messageRecord(message);
}

/**
 * Bytes the message costs in memory once kept in `heldForm`: its raw bytes and its payload,
 * the parsed body included when kept (walked, not taken at the raw size: `[{},{},...]` weighs
 * ten times its text parsed); at least `max + 1` when the payload alone is larger than `max`
 * (the walk stops there).
 */
export function heldBytes(message: QueuedMessage, max: number): number {
  const raw = message.raw?.length ?? 0;
  return FIXED_COST + raw + sizeOf(heldForm(message).payload, max);
}

function hasParsedBody(message: QueuedMessage): boolean {
  const { payload } = message;
  return message.bodyFromRaw === true && message.raw !== undefined && typeof payload === "object" && payload !== null && "body" in payload;
}

/** Approximate bytes of a value; stops counting once past `max`. */
function sizeOf(value: unknown, max: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total <= max) {
    const item = stack.pop();
    if (typeof item === "string") total += 16 + item.length * 2;
    else if (typeof item !== "object" || item === null) total += 8;
    else if (Buffer.isBuffer(item) || ArrayBuffer.isView(item)) total += 64 + item.byteLength;
    else if (item instanceof ArrayBuffer) total += 64 + item.byteLength;
    else if (item instanceof Map || item instanceof Set) {
      total += 64;
      for (const entry of item instanceof Map ? item.entries() : item.values()) stack.push(entry);
    } else {
      total += 32;
      // for-in over own keys: no entries array per object (this runs for every message the store holds).
      const object = item as Record<string, unknown>;
      for (const key in object) {
        if (!Object.hasOwn(object, key)) continue;
        total += 16 + key.length * 2;
        stack.push(object[key]);
      }
    }
  }
  return total;
}
