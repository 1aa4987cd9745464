import { hash, randomFillSync } from "node:crypto";

/**
 * Event ids: UUIDs of version 7 (RFC 9562), the millisecond they were made followed by a
 * counter and random bits. Ids made by one process sort in the order they were made, even
 * within one millisecond, so the history lists a burst in arrival order; and a store indexing
 * events by id adds each new one at the end of its index rather than on a random page.
 *
 * Layout: 48 bits of Unix milliseconds, version 7, a 12-bit counter (starting at a random value
 * below 2048 each millisecond, so 2048 or more ids fit in every millisecond; past 4095 the
 * millisecond moves on by one, and a clock that steps back keeps the last one: ids never sort
 * backwards), the variant, then 62 random bits.
 */

const RANDOM_BYTES = 10;
const HEX = Buffer.from("0123456789abcdef", "latin1");

/** A source of ids that sort in the order it made them (one per process: see newEventId). */
export class EventIds {
  private readonly pool = Buffer.allocUnsafe(RANDOM_BYTES * 512);
  private poolAt = this.pool.length;
  private readonly out = Buffer.allocUnsafe(36);
  private lastMs = -1;
  private counter = 0;

  next(now: number = Date.now()): string {
    const { pool, out } = this;
    if (this.poolAt === pool.length) {
      randomFillSync(pool);
      this.poolAt = 0;
    }
    const at = this.poolAt;
    this.poolAt += RANDOM_BYTES;
    if (now > this.lastMs) {
      this.lastMs = now;
      this.counter = ((pool[at]! << 8) | pool[at + 1]!) & 0x7ff;
    } else if (++this.counter > 0xfff) {
      this.lastMs++;
      this.counter = 0;
    }
    // 48 bits do not fit a 32-bit operation: the high 16 bits and the low 32 apart.
    const high = Math.floor(this.lastMs / 0x1_0000_0000);
    const low = this.lastMs >>> 0;
    hex(out, high, 4, 0);
    hex(out, low >>> 16, 4, 4);
    out[8] = 0x2d;
    hex(out, low & 0xffff, 4, 9);
    out[13] = 0x2d;
    hex(out, 0x7000 | this.counter, 4, 14);
    out[18] = 0x2d;
    hex(out, ((0x80 | (pool[at + 2]! & 0x3f)) << 8) | pool[at + 3]!, 4, 19);
    out[23] = 0x2d;
    for (let i = 0; i < 6; i++) hex(out, pool[at + 4 + i]!, 2, 24 + 2 * i);
    // One flat string (a concatenation would leave V8 a rope to flatten at each comparison).
    return out.toString("latin1", 0, 36);
  }
}

const processIds = new EventIds();

/** A new event id: the process's ids sort in the order they were made. */
export function newEventId(now: number = Date.now()): string {
  return processIds.next(now);
}

/** Writes `value` as `digits` lowercase hex digits at `offset` of `out`. */
function hex(out: Buffer, value: number, digits: number, offset: number): void {
  for (let i = digits - 1; i >= 0; i--) {
    out[offset + i] = HEX[value & 0xf]!;
    value >>>= 4;
  }
}

/** The time part of an id this module made ("xxxxxxxx-xxxx" of a version 7 or 8 UUID), or undefined. */
const TIMED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[78][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/;

/**
 * An id made from another id and a name, the same for the same pair: what a task's result is
 * called, so that a redelivered input emits a message downstream can recognise. When the
 * input's id carries its time (ids made by newEventId, or by this function), the new id keeps
 * that time as a UUID of version 8: it sorts next to its input, so stores indexing ids add it
 * near the end of their index rather than on a random page (half of the history's index writes
 * were such random pages). Other ids (made by an earlier version, or given by a test) give the
 * earlier form: 24 characters of the hash.
 */
export function derivedEventId(inputId: string, name: string): string {
  const key = `${inputId}\u0000${name}`;
  if (!TIMED_ID.test(inputId)) return hash("sha256", key, "base64url").slice(0, 24);
  const digest = hash("sha256", key, "hex");
  // Version 8, the variant's two bits (10) with two of the hash's, then hash digits.
  const id = `${inputId.slice(0, 13)}-8${digest.slice(0, 3)}-${VARIANT_DIGITS[parseInt(digest[3]!, 16) & 0x3]}${digest.slice(4, 7)}-${digest.slice(7, 19)}`;
  // Read once, the joined parts become one flat string: kept as a rope, the id would hold the
  // input's id alive (its first 13 characters are a slice of it) as long as it is kept.
  id.charCodeAt(0);
  return id;
}

const VARIANT_DIGITS = "89ab";
