import type { Inbox, OutcomeWait } from "../sources/source";
import type { QueuedMessage, StateStore, Store, StoreRefusal } from "../store/store";
import type { OutcomeRegistry } from "./outcome-registry";
import { computeOrderingKey, type OrderingKeyFn } from "./ordering-key";

/** The Inbox a task's push source writes to: its queue in the app's store. */
export class TaskInbox implements Inbox {
  constructor(
    readonly task: string,
    private readonly queue: string,
    private readonly store: Store,
    private readonly outcomes: OutcomeRegistry,
    private readonly orderingKey?: OrderingKeyFn<never>,
  ) {}

  admit(): StoreRefusal | undefined {
    return this.store.admit(this.queue);
  }

  /** Throws OrderingKeyError at once, storing nothing, when the task's key function fails. */
  accept(message: QueuedMessage): Promise<void> {
    if (this.orderingKey !== undefined) {
      const orderingKey = computeOrderingKey(this.orderingKey, message.payload, this.task);
      if (orderingKey !== undefined) message = { ...message, orderingKey };
    }
    return this.store.enqueue(this.queue, message);
  }

  expect(id: string, timeoutMs: number): OutcomeWait {
    return this.outcomes.expect(id, timeoutMs);
  }

  state(namespace: string): StateStore {
    return this.store.state(namespace);
  }
}
