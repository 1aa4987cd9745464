/** How a failing task is retried before its event becomes a dead letter. */
export interface RetryPolicy {
  /** Deliveries in all, the first included (default 5). */
  readonly attempts: number;
  /** Delay before the second delivery, in ms (default 1000). */
  readonly initialDelayMs: number;
  /** Each further delay is the previous one times this (default 2). */
  readonly factor: number;
  /** Upper bound of a delay, in ms (default 60000). */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, initialDelayMs: 1000, factor: 2, maxDelayMs: 60_000 };

/** Delay before delivery number `failedAttempts + 1`, with ±10% jitter so retries of a burst spread out. */
export function backoffDelay(policy: RetryPolicy, failedAttempts: number, random = Math.random): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** Math.max(0, failedAttempts - 1));
  return Math.round(base * (0.9 + 0.2 * random()));
}

export function resolveRetry(partial: Partial<RetryPolicy> | undefined, where: string): RetryPolicy {
  const policy = { ...DEFAULT_RETRY, ...partial };
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1) throw new TypeError(`${where}: retry.attempts must be an integer >= 1`);
  if (!(policy.initialDelayMs >= 0)) throw new TypeError(`${where}: retry.initialDelayMs must be >= 0`);
  if (!(policy.factor >= 1)) throw new TypeError(`${where}: retry.factor must be >= 1`);
  if (!(policy.maxDelayMs >= policy.initialDelayMs)) throw new TypeError(`${where}: retry.maxDelayMs must be >= retry.initialDelayMs`);
  return policy;
}
