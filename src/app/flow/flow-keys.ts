import type { QueuedMessage } from "../../store/store";
import { computeOrderingKey } from "../ordering-key";
import type { TaskFlow } from "./flow-options";

/**
 * The message with its concurrency and rate groups, computed when it enters the task's queue
 * (as ordering keys are), so that any process can count them without the payload. No key
 * function, or a key of undefined: the group "" (the task as a whole). Throws OrderingKeyError.
 */
export function withFlowKeys(flow: TaskFlow, message: QueuedMessage, payload: unknown, task: string): QueuedMessage {
  const out: { -readonly [K in keyof QueuedMessage]: QueuedMessage[K] } = { ...message };
  if (flow.concurrency) out.concurrencyKey = flow.concurrency.key === undefined ? "" : (computeOrderingKey(flow.concurrency.key, payload, task, "concurrency.key") ?? "");
  if (flow.rate) out.rateKey = flow.rate.key === undefined ? "" : (computeOrderingKey(flow.rate.key, payload, task, "rateLimit.key") ?? "");
  return out;
}
