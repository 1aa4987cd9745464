import { ClaimedIds } from "../claimed-ids";
import type { QueuedMessage } from "../store";

/** A memory queue's claimed messages by id, without a churning Map (see ClaimedIds). */
export class ClaimedMessages extends ClaimedIds<string, QueuedMessage> {
  /** Claims `message` (replacing a claimed message with its id). */
  add(message: QueuedMessage): void {
    this.set(message.id, message);
  }
}
