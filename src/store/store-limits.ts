/** Ingress limits shared by the engines; past them a source answers 503 + Retry-After. */
export interface StoreLimits {
  /** Most messages one queue may hold (waiting, delayed or claimed). */
  readonly maxQueued: number;
}

export const DEFAULT_MEMORY_LIMITS: StoreLimits = { maxQueued: 100_000 };
