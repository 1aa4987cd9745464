import type { ClaimFlow } from "../../store/store";
import type { OrderingKeyFn } from "../ordering-key";

/**
 * `concurrency: { limit, key? }`: at most `limit` runs of the task at once per value of
 * `key(event)` (without `key`: for the task as a whole), counted across every process that
 * shares the store (on PostgreSQL, every replica). See docs/flow-control.md.
 */
export interface ConcurrencyLimit<E = unknown> {
  /** Runs at once per key (or for the task as a whole, without `key`). */
  limit: number;
  /** The event's group; events whose key is undefined share one group. Computed when the event enters the task's queue. */
  key?: (event: E) => string | undefined;
  /**
   * Runs at once in one process, whatever their keys (default: `limit` without `key`, 16 with
   * it): how much of the work one replica takes on.
   */
  perProcess?: number;
}

/**
 * `rateLimit: { limit, periodMs, key? }`: at most `limit` runs started per `periodMs` (any
 * window of that length) per value of `key(event)`, across every process sharing the store.
 * Events over the limit wait in the queue; none is dropped.
 */
export interface RateLimit<E = unknown> {
  limit: number;
  periodMs: number;
  key?: (event: E) => string | undefined;
}

/** A task's flow limits, checked. */
export interface TaskFlow {
  readonly concurrency?: { readonly limit: number; readonly key: OrderingKeyFn<never> | undefined };
  readonly rate?: { readonly limit: number; readonly periodMs: number; readonly key: OrderingKeyFn<never> | undefined };
}

/** Longest rate period: a timer must be able to wait for it. */
export const MAX_PERIOD_MS = 2 ** 31 - 1;

/**
 * Checks a task's `concurrency` and `rateLimit` and returns how many runs one process takes at
 * once, and the limits shared across processes (undefined when there are none). Throws a
 * TypeError naming the option that is wrong.
 */
export function resolveFlow(
  concurrency: unknown,
  rateLimit: unknown,
  where: string,
  defaultPerProcess: number,
): { perProcess: number; flow: TaskFlow | undefined } {
  let perProcess = defaultPerProcess;
  let shared: TaskFlow["concurrency"];
  if (typeof concurrency === "number" || concurrency === undefined) {
    perProcess = concurrency ?? defaultPerProcess;
    if (!Number.isInteger(perProcess) || perProcess < 1) throw new TypeError(`${where}: concurrency must be an integer >= 1, or { limit, key? }`);
  } else if (isObject(concurrency)) {
    unknownKeys(concurrency, ["limit", "key", "perProcess"], `${where}: concurrency`);
    const limit = positiveInteger(concurrency.limit, `${where}: concurrency.limit`);
    const key = keyFunction(concurrency.key, `${where}: concurrency.key`);
    const own = concurrency.perProcess === undefined ? (key === undefined ? limit : defaultPerProcess) : positiveInteger(concurrency.perProcess, `${where}: concurrency.perProcess`);
    perProcess = key === undefined ? Math.min(own, limit) : own;
    shared = { limit, key };
  } else {
    throw new TypeError(`${where}: concurrency must be an integer >= 1, or { limit, key? }`);
  }
  let rate: TaskFlow["rate"];
  if (rateLimit !== undefined) {
    if (!isObject(rateLimit)) throw new TypeError(`${where}: rateLimit must be { limit, periodMs, key? }`);
    unknownKeys(rateLimit, ["limit", "periodMs", "key"], `${where}: rateLimit`);
    const limit = positiveInteger(rateLimit.limit, `${where}: rateLimit.limit`);
    const periodMs = positiveInteger(rateLimit.periodMs, `${where}: rateLimit.periodMs`);
    if (periodMs > MAX_PERIOD_MS) throw new TypeError(`${where}: rateLimit.periodMs must be at most ${MAX_PERIOD_MS}`);
    rate = { limit, periodMs, key: keyFunction(rateLimit.key, `${where}: rateLimit.key`) };
  }
  const flow = shared === undefined && rate === undefined ? undefined : { ...(shared && { concurrency: shared }), ...(rate && { rate }) };
  return { perProcess, flow };
}

/** What a claim is told to respect. */
export function claimFlow(flow: TaskFlow, rateWait?: (at: number) => void): ClaimFlow {
  return {
    ...(flow.concurrency && { concurrency: flow.concurrency.limit }),
    ...(flow.rate && { rate: { limit: flow.rate.limit, periodMs: flow.rate.periodMs } }),
    ...(rateWait && { rateWait }),
  };
}

/** The shared limits of unchecked options, as far as they read as limits (the CLI, which builds no app); undefined when none. */
export function claimFlowOf(concurrency: unknown, rateLimit: unknown): ClaimFlow | undefined {
  const limit = isObject(concurrency) && typeof concurrency.limit === "number" ? concurrency.limit : undefined;
  const rate = isObject(rateLimit) && typeof rateLimit.limit === "number" && typeof rateLimit.periodMs === "number" ? { limit: rateLimit.limit, periodMs: rateLimit.periodMs } : undefined;
  if (limit === undefined && rate === undefined) return undefined;
  return { ...(limit !== undefined && { concurrency: limit }), ...(rate && { rate }) };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw new TypeError(`${what} must be an integer >= 1, got ${describe(value)}`);
  return value;
}

export function keyFunction(value: unknown, what: string): OrderingKeyFn<never> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function") throw new TypeError(`${what} must be a function (event) => string | undefined, got ${describe(value)}`);
  return value as OrderingKeyFn<never>;
}

export function unknownKeys(value: Record<string, unknown>, known: readonly string[], what: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw new TypeError(`${what}: unknown option "${key}" (known: ${known.join(", ")})`);
  }
}

export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean" || value === null || value === undefined) return String(value);
  return typeof value;
}
