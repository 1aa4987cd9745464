/** Ingress limits shared by the engines; past them a source answers 503 + Retry-After. */
export interface StoreLimits {
  /**
   * Most messages one queue may hold (waiting, delayed or claimed). On the memory store the
   * queue's dead letters count too: they hold the heap as its messages do.
   */
  readonly maxQueued: number;
  /**
   * Most bytes the store's data may occupy (embedded engine; a quota of your own below the
   * disk's). Unset: only the disk limits it, and a full disk answers 503 as well. The memory
   * store counts its dead letters' bytes against it (its queues are bounded by `maxQueued`).
   */
  readonly maxBytes?: number;
}

export const DEFAULT_MEMORY_LIMITS: StoreLimits = { maxQueued: 100_000 };

/** On disk a waiting message costs no process memory, so a queue may hold far more. */
export const DEFAULT_EMBEDDED_LIMITS: StoreLimits = { maxQueued: 10_000_000 };
