import type { Inbox, OutcomeWait, RoutedEvent } from "../sources/source";
import type { EmitRecord, QueuedMessage, StateStore, Store, StoreRefusal } from "../store/store";
import type { Logger } from "../util/logger";
import { RateLimit } from "../util/rate-limit";
import type { OutcomeRegistry } from "./outcome-registry";
import { fanOut, type Subscriber } from "./fan-out";
import { FilterError } from "./task-filter";
import type { InboxHistory } from "./inbox-history";


/** At most one log line per task and this many milliseconds about its filter throwing. */
const FILTER_LOG_EVERY_MS = 10_000;

/**
 * The Inbox a push source writes to: its subscribers' queues in the app's store. An event is
 * routed once (each task's filter, each task's ordering key), then its copies are stored in
 * one write: all of them or none.
 */
export class SourceInbox implements Inbox {
  readonly tasks: readonly string[];
  private readonly queues: readonly string[];
  /** Per task: its filter failures' log lines, at most one per FILTER_LOG_EVERY_MS. */
  private readonly filterLog = new Map<string, RateLimit>();
  /** Writes not settled yet (with their history notes): an `ack: "received"` answer does not wait for them, stop() does. */
  private writing = 0;
  private whenSettled: Array<() => void> = [];

  constructor(
    /** The source's label in logs and metrics. */
    readonly name: string,
    /** Of the deduplication markers: with a lone task, its name's (so markers from before fan-out stay). */
    readonly dedupeNamespace: string,
    private readonly subscribers: readonly Subscriber[],
    private readonly store: Store,
    private readonly outcomes: OutcomeRegistry,
    private readonly logger: Logger,
    /** Namespaces of markers from before the source had several tasks (each task's, when it was alone). */
    readonly dedupeEarlier: readonly string[] = [],
    /** Told of each stored event when the app keeps a history. */
    private readonly history: InboxHistory | undefined = undefined,
  ) {
    this.tasks = subscribers.map((s) => s.name);
    this.queues = subscribers.map((s) => s.queue);
  }

  /** Before the body is read the event's route is unknown: a full queue of any subscriber refuses. */
  admit(): StoreRefusal | undefined {
    const { queues, store } = this;
    if (queues.length === 1) return store.admit(queues[0]);
    for (const queue of queues) {
      const refusal = store.admit(queue);
      if (refusal !== undefined) return refusal;
    }
    return undefined;
  }

  /** Throws FilterError (logged here, throttled) or OrderingKeyError, storing nothing. */
  route(message: QueuedMessage): RoutedEvent {
    try {
      return { id: message.id, copies: fanOut(this.subscribers, message) };
    } catch (error) {
      if (error instanceof FilterError) this.filterFailed(error, message.id);
      throw error;
    }
  }

  accept(routed: RoutedEvent): Promise<void> {
    const copies: readonly EmitRecord[] = routed.copies;
    const written = copies.length === 1 ? this.store.enqueue(copies[0].queue, copies[0].message) : this.store.enqueueAll(copies);
    // Noted once stored, beside the answer: the sender never waits for the history. Counted in
    // the same reaction, so that tracking the write costs no promise of its own per request.
    this.writing++;
    written.then(
      () => {
        try {
          this.history?.accepted(routed);
        } finally {
          this.written();
        }
      },
      () => this.written(),
    );
    return written;
  }

  /** Resolves once no write is in flight, each settled and its event noted in the history (stop() calls it once the listeners are closed). */
  settled(): Promise<void> {
    if (this.writing === 0) return Promise.resolve();
    return new Promise((resolve) => this.whenSettled.push(resolve));
  }

  private written(): void {
    if (--this.writing > 0 || this.whenSettled.length === 0) return;
    const waiting = this.whenSettled;
    this.whenSettled = [];
    for (const resolve of waiting) resolve();
  }

  unrouted(message: QueuedMessage): void {
    this.history?.unrouted(message);
  }

  expect(id: string, timeoutMs: number): OutcomeWait {
    return this.outcomes.expect(id, timeoutMs);
  }

  state(namespace: string): StateStore {
    return this.store.state(namespace);
  }

  private filterFailed(error: FilterError, eventId: string): void {
    let limit = this.filterLog.get(error.task);
    if (limit === undefined) this.filterLog.set(error.task, (limit = new RateLimit(FILTER_LOG_EVERY_MS)));
    const passed = limit.pass();
    if (passed === undefined) return;
    this.logger.error({ source: this.name, task: error.task, eventId, err: error, suppressed: passed.suppressed }, "a task's filter failed: answered 500 filter_failed, nothing stored");
  }
}
