import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Compares two strings without leaking where they differ or how long the expected one is:
 * both sides are hashed first, so timingSafeEqual always sees equal lengths.
 */
export function constantTimeEqual(actual: string | Buffer, expected: string | Buffer): boolean {
  const a = createHash("sha256").update(actual).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && Buffer.byteLength(actual) === Buffer.byteLength(expected);
}
