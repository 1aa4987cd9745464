import { ReplayError, type ReplayCopyTarget } from "../app/event-replay";
import { FLOW_RECORDS_NAMESPACE, replayFlowOfRecord, type FlowRecord } from "../app/flow/flow-record";
import { flowKeyFunction } from "../config/flow-key";
import type { HistoryEvent } from "../store/history";
import type { Store } from "../store/store";
import type { TaskQueues } from "./app-store";

const INSTEAD = "replay it with the app instead of --store (webhook-tasks events replay <id> <worker.yaml | --module file.js>), from the console, or with app.events.replay";

/**
 * The targets with their tasks' flow limits, so that a replay's copy counts in the same
 * concurrency and rate groups as an arriving event. Known the app (a YAML file, a module): its
 * own key functions. With --store, no app code: the limits the app noted in the store when it
 * started, computed when they need no code (no key, or a YAML key path); a key that is a
 * function of the app, or a task whose limits were never noted, refuses the replay rather than
 * queue a copy that no limit would hold back.
 */
export async function withFlows(store: Pick<Store, "state">, event: HistoryEvent, targets: readonly ReplayCopyTarget[], tasks: readonly TaskQueues[] | undefined): Promise<ReplayCopyTarget[]> {
  if (tasks !== undefined) {
    return targets.map((target) => {
      const flow = tasks.find((k) => k.name === target.name && k.queue === target.queue)?.replayFlow;
      return flow === undefined ? target : { ...target, flow };
    });
  }
  const records = store.state(FLOW_RECORDS_NAMESPACE);
  return Promise.all(
    targets.map(async (target) => {
      const refuse = (why: string) => new ReplayError(`cannot replay event "${event.id}" to task "${target.name}" from --store: ${why}; ${INSTEAD}`);
      const record = await records.get<FlowRecord>(target.name);
      if (record === undefined || record.queue !== target.queue) {
        throw refuse(`the store holds no note of the task's flow limits (concurrency, rateLimit) for queue "${target.queue}" (the app notes them each time it starts: start it once with this version)`);
      }
      const flow = replayFlowOfRecord(record, flowKeyFunction);
      if (flow !== undefined && "refused" in flow) throw refuse(`${flow.refused}, which --store does not import, and a copy without its key would not count against the task's limit`);
      return flow === undefined ? target : { ...target, flow };
    }),
  );
}
