import type { QueuedMessage } from "../../store/store";
import { computeOrderingKey } from "../ordering-key";
import type { TaskFlow } from "./flow-options";

/**
 * The message with its concurrency and rate groups, computed when it enters the task's queue
 * (as ordering keys are), so that any process can count them without the payload. No key
 * function, or a key of undefined: the group "" (the task as a whole). Throws OrderingKeyError.
 */
export function withFlowKeys(flow: TaskFlow, message: QueuedMessage, payload: unknown, task: string): QueuedMessage {
  const { concurrency, rate } = flow;
  const concurrencyKey = concurrency === undefined ? undefined : concurrency.key === undefined ? "" : (computeOrderingKey(concurrency.key, payload, task, "concurrency.key") ?? "");
  const rateKey = rate === undefined ? undefined : rate.key === undefined ? "" : (computeOrderingKey(rate.key, payload, task, "rateLimit.key") ?? "");
  // One literal per case: the copy gets its final shape at once (no properties added after).
  if (rateKey === undefined) return { ...message, concurrencyKey };
  if (concurrencyKey === undefined) return { ...message, rateKey };
  return { ...message, concurrencyKey, rateKey };
}
