import type { Inbox, OutcomeWait } from "../sources/source";
import type { QueuedMessage, StateStore, Store, StoreRefusal } from "../store/store";
import type { OutcomeRegistry } from "./outcome-registry";

/** The Inbox a task's push source writes to: its queue in the app's store. */
export class TaskInbox implements Inbox {
  constructor(
    readonly task: string,
    private readonly queue: string,
    private readonly store: Store,
    private readonly outcomes: OutcomeRegistry,
  ) {}

  admit(): StoreRefusal | undefined {
    return this.store.admit(this.queue);
  }

  accept(message: QueuedMessage): Promise<void> {
    return this.store.enqueue(this.queue, message);
  }

  expect(id: string, timeoutMs: number): OutcomeWait {
    return this.outcomes.expect(id, timeoutMs);
  }

  state(namespace: string): StateStore {
    return this.store.state(namespace);
  }
}
