import type { QueuedMessage } from "../store/store";
import { checkStorable } from "../store/payload-codec";
import { errorMessage } from "../util/logger";

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
