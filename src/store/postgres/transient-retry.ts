import { setTimeout as sleep } from "node:timers/promises";
import { serverCode } from "./postgres-errors";

/** Tries of one statement that keeps losing to concurrent transactions, before its caller sees the error. */
const TRIES = 6;

/**
 * Whether the server rolled a statement back only because it lost to a concurrent transaction
 * (40001 serialization failure under a REPEATABLE READ or SERIALIZABLE default isolation, 40P01
 * deadlock): nothing of it was kept, and the same statement may well pass a moment later.
 */
export function isTransient(error: unknown): boolean {
  const code = serverCode(error);
  return code === "40001" || code === "40P01";
}

/**
 * Runs `statement` again while it fails transiently, after a short random pause. Only for
 * statements that are their own transaction: a rolled-back one left nothing, so its retry
 * cannot write anything twice.
 */
export async function retryTransient<T>(statement: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (error) {
      if (attempt >= TRIES || !isTransient(error)) throw error;
      await sleep(Math.floor(Math.random() * 5 * 2 ** attempt));
    }
  }
}
