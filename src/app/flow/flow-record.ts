import type { StateStore } from "../../store/store";
import type { OrderingKeyFn } from "../ordering-key";
import type { TaskFlow } from "./flow-options";

/**
 * Where an app notes its tasks' flow limits in its store, one entry per task, when it starts:
 * a replay queued by the CLI with `--store` (no app code imported) must put its copy in the
 * same concurrency and rate groups as an arriving event, or not be queued at all.
 */
export const FLOW_RECORDS_NAMESPACE = "webhook-tasks:task-flow";

/** A flow key as noted: a YAML key path (computable without the app), or code (not). Absent: the task as a whole. */
export type FlowKeyRecord = { readonly path: string; readonly webhook: boolean } | { readonly code: true };

export interface FlowRecord {
  /** The task's queue when noted: a copy for another queue is not this task's. */
  readonly queue: string;
  readonly concurrency?: { readonly limit: number; readonly key?: FlowKeyRecord };
  readonly rate?: { readonly limit: number; readonly periodMs: number; readonly key?: FlowKeyRecord };
}

/** Key functions made from a YAML path, with the path: the record can say how to compute them. */
const declared = new WeakMap<Function, { readonly path: string; readonly webhook: boolean }>();

/** Marks `fn` as the key function of a YAML key path (config/flow-key.ts). */
export function declareKeyPath<F extends Function>(fn: F, path: string, webhook: boolean): F {
  declared.set(fn, { path, webhook });
  return fn;
}

export function flowRecordOf(queue: string, flow: TaskFlow | undefined): FlowRecord {
  const keyOf = (fn: OrderingKeyFn<never> | undefined): { key?: FlowKeyRecord } => (fn === undefined ? {} : { key: declared.get(fn) ?? { code: true } });
  const { concurrency, rate } = flow ?? {};
  return {
    queue,
    ...(concurrency && { concurrency: { limit: concurrency.limit, ...keyOf(concurrency.key) } }),
    ...(rate && { rate: { limit: rate.limit, periodMs: rate.periodMs, ...keyOf(rate.key) } }),
  };
}

/** Notes every task's limits (a task without any too: the CLI then knows it has none). */
export async function recordTaskFlows(state: StateStore, tasks: ReadonlyArray<{ readonly name: string; readonly queue: string; readonly flow: TaskFlow | undefined }>): Promise<void> {
  await Promise.all(
    tasks.map(async (task) => {
      const record = flowRecordOf(task.queue, task.flow);
      const before = await state.get<FlowRecord>(task.name);
      // A restart with the same limits writes nothing.
      if (before === undefined || JSON.stringify(before) !== JSON.stringify(record)) await state.set(task.name, record);
    }),
  );
}

/**
 * The limits a replay's copy is queued under, from a task's record, when they can be computed
 * without the app's code; otherwise the reason why not (a key function of the app).
 */
export function replayFlowOfRecord(record: FlowRecord, keyFunction: (path: string, webhook: boolean) => OrderingKeyFn<never>): TaskFlow | undefined | { readonly refused: string } {
  const coded = [record.concurrency?.key !== undefined && "code" in record.concurrency.key && "concurrency", record.rate?.key !== undefined && "code" in record.rate.key && "rateLimit"].filter((s): s is string => typeof s === "string");
  if (coded.length > 0) return { refused: `its ${coded.map((s) => `${s}.key`).join(" and ")} ${coded.length === 1 ? "is a function" : "are functions"} of the app's code` };
  const fn = (key: FlowKeyRecord | undefined): OrderingKeyFn<never> | undefined => (key === undefined || "code" in key ? undefined : keyFunction(key.path, key.webhook));
  const { concurrency, rate } = record;
  if (concurrency === undefined && rate === undefined) return undefined;
  return {
    ...(concurrency && { concurrency: { limit: concurrency.limit, key: fn(concurrency.key) } }),
    ...(rate && { rate: { limit: rate.limit, periodMs: rate.periodMs, key: fn(rate.key) } }),
  };
}
