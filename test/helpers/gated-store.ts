import type { DeadLetter, DeadLetterStore, EmitRecord, QueuedMessage, StateStore, Store, StoreRefusal } from "../../src/index";
import type { ClaimedGroups, ClaimFlow, GroupRule, QueueStats } from "../../src/store/store";

/**
 * A real store whose enqueues wait at a gate the test opens: the write is held open, so a test
 * can see what the app does (and does not answer) before its event is stored. Everything else
 * goes straight to the store underneath.
 */
export class GatedStore implements Store {
  /** Enqueue calls that reached the gate. */
  entered = 0;
  private opened!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.opened = resolve));

  constructor(private readonly inner: Store) {}

  /** Lets every held and later enqueue through. */
  openGate(): void {
    this.opened();
  }

  get engine(): string {
    return this.inner.engine;
  }
  get durable(): boolean {
    return this.inner.durable;
  }
  get failure(): Error | undefined {
    return this.inner.failure;
  }
  get deadLetters(): DeadLetterStore {
    return this.inner.deadLetters;
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
  async enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    this.entered++;
    await this.gate;
    return this.inner.enqueue(queue, message, options);
  }
  async enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    this.entered++;
    await this.gate;
    return this.inner.enqueueAll(copies, options);
  }
  claim(queue: string, limit: number, flow?: ClaimFlow): Promise<QueuedMessage[]> {
    return this.inner.claim(queue, limit, flow);
  }
  get enforcesFlow(): boolean {
    return this.inner.enforcesFlow === true;
  }
  limitedCount(queue: string, flow: ClaimFlow): Promise<number> {
    return this.inner.limitedCount?.(queue, flow) ?? Promise.resolve(0);
  }
  claimGroups(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> {
    if (this.inner.claimGroups === undefined) return Promise.reject(new Error(`the ${this.inner.engine} store cannot claim groups`));
    return this.inner.claimGroups(queue, rule, limit);
  }
  completeGroup(queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    if (this.inner.completeGroup === undefined) return Promise.reject(new Error(`the ${this.inner.engine} store cannot complete groups`));
    return this.inner.completeGroup(queue, ids, emit);
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
