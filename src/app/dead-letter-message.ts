import type { QueuedMessage, Store } from "../store/store";
import { checkStorable } from "../store/payload-codec";
import { StoreRefusedError } from "../store/store-errors";
import { errorMessage, type Logger } from "../util/logger";
import type { RegisteredTask } from "./task-registry";

/**
 * Writes the dead letter in a form the store can encode (see deadLetterMessage). A write
 * that still throws for a reason other than the store is tried once more without the
 * payload: an event that can never become a dead letter would run for ever.
 */
export async function writeDeadLetter(store: Store, task: Pick<RegisteredTask, "queue" | "name">, failed: QueuedMessage, error: string, logger: Logger): Promise<void> {
  const { message, dropped } = deadLetterMessage(failed);
  if (dropped !== undefined) logger.error({ dropped }, "the dead letter cannot keep all of the event; it keeps the rest");
  try {
    await store.deadLetter({ queue: task.queue, task: task.name, message, error, attempts: message.attempts, diedAt: Date.now() });
  } catch (writeError) {
    if (writeError instanceof StoreRefusedError) throw writeError;
    logger.error({ err: writeError }, "the dead letter cannot be written with its payload; it is written without it");
    await store.deadLetter({ queue: task.queue, task: task.name, message: withoutPayload(message), error, attempts: message.attempts, diedAt: Date.now() });
  }
}

/** A message read back without its body (QueuedMessage.bodyFromRaw) gets it from its task's source. */
export function revived(task: Pick<RegisteredTask, "source">, message: QueuedMessage): QueuedMessage {
  const { payload, raw } = message;
  const source = task.source;
  if (!message.bodyFromRaw || raw === undefined || source?.revive === undefined) return message;
  if (typeof payload !== "object" || payload === null || "body" in payload) return message;
  return { ...message, payload: source.revive(payload, raw) };
}

/**
 * The message a dead letter keeps, in a form every engine can write. A dead letter keeps the
 * parsed body of a webhook event; a body the store cannot encode (nested deeper than it can
 * write, say, past a raised `maxBodyDepth`) would make the write throw every time, and the
 * event would run again and again without ever counting out its attempts. So the body is
 * left out when the raw bytes can give it back, and the payload as a last resort; `dropped`
 * says what was left out and why.
 */
export function deadLetterMessage(message: QueuedMessage): { message: QueuedMessage; dropped?: string } {
  try {
    checkStorable(message.payload, "payload");
    return { message };
  } catch (error) {
    const { payload } = message;
    if (message.bodyFromRaw && message.raw !== undefined && typeof payload === "object" && payload !== null && "body" in payload) {
      const { body: _rebuiltFromRaw, ...rest } = payload as Record<string, unknown>;
      try {
        checkStorable(rest, "payload");
        return { message: { ...message, payload: rest }, dropped: `the parsed body (it is rebuilt from the raw bytes): ${errorMessage(error)}` };
      } catch {
        // The rest cannot be stored either: fall through to dropping the payload.
      }
    }
    return { message: withoutPayload(message), dropped: `the payload: ${errorMessage(error)}` };
  }
}

/** The message with no payload at all (its raw bytes, if any, kept): the last form of a dead letter. */
export function withoutPayload(message: QueuedMessage): QueuedMessage {
  return { ...message, payload: null, bodyFromRaw: false };
}
