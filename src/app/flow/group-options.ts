import type { GroupRule, QueuedMessage } from "../../store/store";
import { computeOrderingKey, type OrderingKeyFn } from "../ordering-key";
import { describe, isObject, keyFunction, MAX_PERIOD_MS, unknownKeys } from "./flow-options";

/**
 * `debounce: { periodMs, key?, maxWaitMs? }`: a burst of events with one key runs the task
 * once, `periodMs` after the burst's last event (or `maxWaitMs` after its first). The handler
 * gets the newest event as `event` and every event of the burst in `ctx.batch`, oldest first.
 */
export interface DebounceOptions<E = unknown> {
  /** Quiet time after the last event of a burst before the task runs. */
  periodMs: number;
  /** The burst's group; events whose key is undefined share one group. Computed when the event enters the task's queue. */
  key?: (event: E) => string | undefined;
  /** Longest a burst's first event waits, however long the burst goes on (default: no bound). */
  maxWaitMs?: number;
}

/**
 * `batch: { maxSize, maxWaitMs, key? }`: the handler receives up to `maxSize` events at once,
 * as an array, oldest first; a batch runs once it is full or `maxWaitMs` after its first event.
 */
export interface BatchOptions<E = unknown> {
  maxSize: number;
  maxWaitMs: number;
  /** Events with different keys never share a batch; events whose key is undefined share one group with those whose key is "" (the task as a whole). */
  key?: (event: E) => string | undefined;
}

/** A debounced or batched task's grouping, checked. */
export interface TaskGroup {
  readonly rule: GroupRule;
  readonly key: OrderingKeyFn<never> | undefined;
}

/** Most events one run gets: a batch's `maxSize` may not exceed it, and a longer burst is handed out in parts of this size. */
export const MAX_GROUP_SIZE = 10_000;

/** The options a group excludes, as the task gave them. */
interface GroupNeighbours {
  readonly concurrency?: unknown;
  readonly rateLimit?: unknown;
  readonly orderingKey?: unknown;
}

/**
 * Checks a task's `debounce` and `batch` and returns its grouping (undefined without either).
 * Throws a TypeError naming the option that is wrong or the options that do not go together.
 */
export function resolveGroup(debounce: unknown, batch: unknown, others: GroupNeighbours, where: string): TaskGroup | undefined {
  if (debounce === undefined && batch === undefined) return undefined;
  const option = debounce !== undefined ? "debounce" : "batch";
  if (debounce !== undefined && batch !== undefined) throw new TypeError(`${where}: debounce and batch cannot be used together (a debounced run already gets every event of its burst in ctx.batch)`);
  if (others.orderingKey !== undefined) throw new TypeError(`${where}: ${option} and orderingKey cannot be used together (${option} runs a key's events together, not one by one)`);
  if (others.rateLimit !== undefined) throw new TypeError(`${where}: ${option} and rateLimit cannot be used together`);
  if (others.concurrency !== undefined && typeof others.concurrency !== "number") {
    throw new TypeError(`${where}: with ${option}, concurrency must be a number (the groups one process runs at once); { limit, key } is not supported`);
  }
  if (debounce !== undefined) {
    if (!isObject(debounce)) throw new TypeError(`${where}: debounce must be { periodMs, key?, maxWaitMs? }`);
    unknownKeys(debounce, ["periodMs", "key", "maxWaitMs"], `${where}: debounce`);
    const periodMs = period(debounce.periodMs, `${where}: debounce.periodMs`);
    const maxWaitMs = debounce.maxWaitMs === undefined ? undefined : period(debounce.maxWaitMs, `${where}: debounce.maxWaitMs`);
    if (maxWaitMs !== undefined && maxWaitMs < periodMs) throw new TypeError(`${where}: debounce.maxWaitMs (${maxWaitMs}) must be at least debounce.periodMs (${periodMs})`);
    const rule: GroupRule = maxWaitMs === undefined ? { kind: "debounce", periodMs, maxSize: MAX_GROUP_SIZE } : { kind: "debounce", periodMs, maxWaitMs, maxSize: MAX_GROUP_SIZE };
    return { rule, key: keyFunction(debounce.key, `${where}: debounce.key`) };
  }
  if (!isObject(batch)) throw new TypeError(`${where}: batch must be { maxSize, maxWaitMs, key? }`);
  unknownKeys(batch, ["maxSize", "maxWaitMs", "key"], `${where}: batch`);
  const maxSize = batch.maxSize;
  if (typeof maxSize !== "number" || !Number.isInteger(maxSize) || maxSize < 1 || maxSize > MAX_GROUP_SIZE) {
    throw new TypeError(`${where}: batch.maxSize must be an integer from 1 to ${MAX_GROUP_SIZE}, got ${describe(maxSize)}`);
  }
  const maxWaitMs = period(batch.maxWaitMs, `${where}: batch.maxWaitMs`);
  return { rule: { kind: "batch", maxSize, maxWaitMs }, key: keyFunction(batch.key, `${where}: batch.key`) };
}

/** The message with its group, computed when it enters the task's queue (as flow keys are). Throws OrderingKeyError. */
export function withGroupKey(group: TaskGroup, message: QueuedMessage, payload: unknown, task: string): QueuedMessage {
  const option = group.rule.kind === "debounce" ? "debounce.key" : "batch.key";
  const groupKey = group.key === undefined ? "" : (computeOrderingKey(group.key, payload, task, option) ?? "");
  return { ...message, groupKey };
}

function period(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_PERIOD_MS) {
    throw new TypeError(`${what} must be an integer number of milliseconds from 1 to ${MAX_PERIOD_MS}, got ${describe(value)}`);
  }
  return value;
}

