import type { HistoryStore, PauseStore } from "./history";
import type { ClaimedGroups, ClaimFlow, DeadLetter, GroupRule, DeadLetterStore, EmitRecord, QueuedMessage, QueueStats, StateStore, Store, StoreCloseOptions, StoreRefusal } from "./store";

/**
 * A store that passes every call to another, the optional capabilities included (claimNow and
 * completeNow, flow limits in the claim, claims that are statements): the base of the app's
 * wrappers (metrics, the debug delivery log), which override only what they watch. A wrapper
 * that forgot a capability would silently change how the runner uses the engine: flow limits
 * counted per process instead of across replicas, the synchronous path of the memory store lost.
 */
export class ForwardingStore implements Store {
  // Not readonly: a wrapper watching them replaces them in its constructor.
  claimNow?: (queue: string) => QueuedMessage | undefined;
  completeNow?: (queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]) => void;
  readonly limitedCount?: (queue: string, flow: ClaimFlow) => Promise<number>;
  claimGroups?: (queue: string, rule: GroupRule, limit: number) => Promise<ClaimedGroups>;
  completeGroup?: (queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]) => Promise<void>;

  constructor(readonly inner: Store) {
    // Present here exactly when the engine has them: the runner looks for them.
    if (inner.claimNow !== undefined && inner.completeNow !== undefined) {
      const { claimNow, completeNow } = inner;
      this.claimNow = (queue) => claimNow.call(inner, queue);
      this.completeNow = (queue, id, emit) => completeNow.call(inner, queue, id, emit);
    }
    const { limitedCount } = inner;
    if (limitedCount !== undefined) this.limitedCount = (queue, flow) => limitedCount.call(inner, queue, flow);
    // Debounced and batched tasks need both; an app refuses them on an engine without.
    if (inner.claimGroups !== undefined && inner.completeGroup !== undefined) {
      const { claimGroups, completeGroup } = inner;
      this.claimGroups = (queue, rule, limit) => claimGroups.call(inner, queue, rule, limit);
      this.completeGroup = (queue, ids, emit) => completeGroup.call(inner, queue, ids, emit);
    }
  }

  get engine(): string {
    return this.inner.engine;
  }
  get durable(): boolean {
    return this.inner.durable;
  }
  get writesSettleAtOnce(): boolean | undefined {
    return this.inner.writesSettleAtOnce;
  }
  get claimsAreStatements(): boolean | undefined {
    return this.inner.claimsAreStatements;
  }
  get enforcesFlow(): boolean | undefined {
    return this.inner.enforcesFlow;
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
  close(options?: StoreCloseOptions): Promise<void> {
    return this.inner.close(options);
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
  claim(queue: string, limit: number, flow?: ClaimFlow): Promise<QueuedMessage[]> {
    return this.inner.claim(queue, limit, flow);
  }
  complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
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
