import type { StoreRefusal } from "./store";

/** Thrown by a store that will not take a message; carries the refusal the HTTP layer answers with. */
export class StoreRefusedError extends Error {
  readonly refusal: StoreRefusal;
  constructor(refusal: StoreRefusal, options?: { cause?: unknown }) {
    super(refusal.message, options);
    this.name = "StoreRefusedError";
    this.refusal = refusal;
  }
}

/**
 * Turns any engine failure into a refusal, so a broken disk answers 503 and never 202. The
 * engine's own text stays out of it (it goes to senders); log the error itself for operators.
 */
export function toRefusal(error: unknown): StoreRefusal {
  if (error instanceof StoreRefusedError) return error.refusal;
  return { code: "store_unavailable", message: "the store cannot write right now", retryAfterSeconds: 5 };
}

/** The engine's own explanation of a failure, for logs: the innermost cause's message. */
export function storeFailureDetail(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause !== undefined) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
