import type { Inbox, OutcomeWait, RoutedEvent } from "../sources/source";
import type { QueuedMessage, StateStore, StoreRefusal } from "../store/store";

/** A source's inbox that reports each event once its copies are stored, or once no task took it (the debug delivery log). */
export class DeliveryLogInbox implements Inbox {
  readonly name: string;
  readonly tasks: readonly string[];
  readonly dedupeNamespace: string;
  readonly dedupeEarlier?: readonly string[];

  constructor(
    private readonly inner: Inbox,
    private readonly stored: (routed: RoutedEvent) => void,
    private readonly unroutedSeen: (message: QueuedMessage) => void,
  ) {
    this.name = inner.name;
    this.tasks = inner.tasks;
    this.dedupeNamespace = inner.dedupeNamespace;
    this.dedupeEarlier = inner.dedupeEarlier;
  }

  admit(): StoreRefusal | undefined {
    return this.inner.admit();
  }
  route(message: QueuedMessage): RoutedEvent {
    return this.inner.route(message);
  }
  accept(routed: RoutedEvent): Promise<void> {
    const accepted = this.inner.accept(routed);
    accepted.then(
      () => this.stored(routed),
      () => undefined,
    );
    return accepted;
  }
  unrouted(message: QueuedMessage): void {
    this.inner.unrouted?.(message);
    this.unroutedSeen(message);
  }
  expect(id: string, timeoutMs: number): OutcomeWait {
    return this.inner.expect(id, timeoutMs);
  }
  state(namespace: string): StateStore {
    return this.inner.state(namespace);
  }
}
