import type { QueueStats, Store } from "../../store/store";
import { claimFlow, type TaskFlow } from "./flow-options";

/** What the stats overlay needs of a queue's task and runner. */
export interface FlowHolder {
  readonly flow: TaskFlow | undefined;
  /** Claimed messages a runner's gate holds back (in-process engines), and those it holds in all. */
  readonly gate?: { readonly limited: number; readonly held: number } | undefined;
  /** A debounced or batched task's messages waiting in groups not yet due (group-runner.ts). */
  readonly collecting?: number;
}

/** A queue's figures as status and metrics show them: `waiting`, with `delayed` and `limited` among them. */
export interface FlowQueueStats extends QueueStats {
  /** Of `waiting`, due messages held back by the task's concurrency or rate limit. */
  readonly limited: number;
  readonly delayed: number;
  /** Of `waiting`, messages collecting in a debounce or a batch that is not due yet. */
  readonly collecting: number;
}

/**
 * The store's figures with the task's flow limits added: messages the runner's gate holds are
 * claimed in the store but not running, so they count as waiting (and limited) here; an engine
 * that limits in its claims (PostgreSQL) counts its held-back messages itself.
 */
export async function flowQueueStats(store: Store, queue: string, holder: FlowHolder | undefined): Promise<FlowQueueStats> {
  const stats = await store.stats(queue);
  const delayed = stats.delayed ?? 0;
  const flow = holder?.flow;
  // As the runner's last claim counted them, bounded by what waits now and is not delayed.
  const collecting = Math.max(0, Math.min(holder?.collecting ?? 0, stats.waiting - delayed));
  if (flow === undefined) return { ...stats, delayed, limited: 0, collecting };
  if (store.enforcesFlow && store.limitedCount !== undefined) return { ...stats, delayed, limited: await store.limitedCount(queue, claimFlow(flow)), collecting };
  const held = Math.min(holder?.gate?.held ?? 0, stats.inFlight);
  return { ...stats, waiting: stats.waiting + held, inFlight: stats.inFlight - held, delayed, limited: Math.min(holder?.gate?.limited ?? 0, held), collecting };
}
