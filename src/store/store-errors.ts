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

/** Turns any engine failure into a refusal, so a broken disk answers 503 and never 202. */
export function toRefusal(error: unknown): StoreRefusal {
  if (error instanceof StoreRefusedError) return error.refusal;
  const message = error instanceof Error ? error.message : String(error);
  return { code: "store_unavailable", message: `store cannot write: ${message}`, retryAfterSeconds: 5 };
}
