import type { HistoryStore, PauseStore } from "../store/history";
import type { DeadLetter, DeadLetterStore, EmitRecord, QueuedMessage, QueueStats, StateStore, Store, StoreRefusal } from "../store/store";
import { emitList } from "../store/store";

/**
 * A store that tells the debug delivery log what each completion emits (the ids of the emitted
 * events), before the run's outcome is reported; everything else passes straight through.
 */
export class DeliveryLogStore implements Store {
  constructor(
    readonly inner: Store,
    private readonly completing: (queue: string, id: string, emit: readonly EmitRecord[]) => void,
  ) {}

  get engine(): string {
    return this.inner.engine;
  }
  get durable(): boolean {
    return this.inner.durable;
  }
  get writesSettleAtOnce(): boolean | undefined {
    return this.inner.writesSettleAtOnce;
  }
  get failure(): Error | undefined {
    return this.inner.failure;
  }
  get deadLetters(): DeadLetterStore {
    return this.inner.deadLetters;
  }
  get history(): HistoryStore | undefined {
    return this.inner.history;
  }
  get pauses(): PauseStore | undefined {
    return this.inner.pauses;
  }

  open(): Promise<void> {
    return this.inner.open();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  admit(queue: string): StoreRefusal | undefined {
    return this.inner.admit(queue);
  }
  enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    return this.inner.enqueue(queue, message, options);
  }
  enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    return this.inner.enqueueAll(copies, options);
  }
  claim(queue: string, limit: number): Promise<QueuedMessage[]> {
    return this.inner.claim(queue, limit);
  }
  complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    if (emit !== undefined) this.completing(queue, id, emitList(emit));
    return this.inner.complete(queue, id, emit);
  }
  retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    return this.inner.retryLater(queue, message, visibleAt);
  }
  release(queue: string, ids: readonly string[]): Promise<void> {
    return this.inner.release(queue, ids);
  }
  deadLetter(letter: DeadLetter): Promise<void> {
    return this.inner.deadLetter(letter);
  }
  state(namespace: string): StateStore {
    return this.inner.state(namespace);
  }
  depth(queue: string): Promise<number> {
    return this.inner.depth(queue);
  }
  stats(queue: string): Promise<QueueStats> {
    return this.inner.stats(queue);
  }
  queueNames(): Promise<string[]> {
    return this.inner.queueNames();
  }
  watch(queue: string, listener: () => void): () => void {
    return this.inner.watch(queue, listener);
  }
}
