import { performance } from "node:perf_hooks";
import type { ClaimFlow, DeadLetter, DeadLetterStore, EmitRecord, QueuedMessage, QueueStats, StateStore, Store, StoreRefusal } from "../store/store";
import type { HistoryStore, PauseStore } from "../store/history";
import type { StoreWrite } from "./app-observer";

/**
 * A store whose queue writes are timed (until they resolve, that is until durable) and
 * reported; everything else passes straight through. The app wraps its store in it when
 * metrics are on, so the engines know nothing of metrics. A store whose writes are done when
 * the call returns (Store.writesSettleAtOnce) has nothing to wait for: each write is reported
 * at once with a duration of 0, without two clock reads and a callback per write.
 */
export class TimedStore implements Store {
  /** The engine's name, read once: it labels every write. */
  private readonly engineName: string;
  private readonly atOnce: boolean;
  /** With writes settled at once, one report per operation, made once: nothing allocated per write. */
  private readonly instant: Readonly<Record<StoreWrite["operation"], StoreWrite>>;

  constructor(
    readonly inner: Store,
    private readonly report: (write: StoreWrite) => void,
  ) {
    this.engineName = inner.engine;
    this.atOnce = inner.writesSettleAtOnce === true;
    const instant = (operation: StoreWrite["operation"]): StoreWrite => Object.freeze({ engine: this.engineName, operation, durationSeconds: 0 });
    this.instant = { enqueue: instant("enqueue"), complete: instant("complete"), retryLater: instant("retryLater"), deadLetter: instant("deadLetter") };
    // The synchronous forms only where the engine has them: the runner looks for them here.
    if (inner.claimNow !== undefined && inner.completeNow !== undefined) {
      const { claimNow, completeNow } = inner;
      this.claimNow = (queue) => claimNow.call(inner, queue);
      this.completeNow = (queue, id, emit) => {
        this.report(this.instant.complete);
        completeNow.call(inner, queue, id, emit);
      };
    }
  }

  readonly claimNow?: (queue: string) => QueuedMessage | undefined;
  readonly completeNow?: (queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]) => void;

  get engine(): string {
    return this.inner.engine;
  }
  get durable(): boolean {
    return this.inner.durable;
  }
  get writesSettleAtOnce(): boolean {
    return this.atOnce;
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
    if (this.atOnce) return this.now("enqueue", this.inner.enqueue(queue, message, options));
    return this.timed("enqueue", performance.now(), this.inner.enqueue(queue, message, options));
  }
  enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    if (this.atOnce) return this.now("enqueue", this.inner.enqueueAll(copies, options));
    return this.timed("enqueue", performance.now(), this.inner.enqueueAll(copies, options));
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
  complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    if (this.atOnce) return this.now("complete", this.inner.complete(queue, id, emit));
    return this.timed("complete", performance.now(), this.inner.complete(queue, id, emit));
  }
  retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    if (this.atOnce) return this.now("retryLater", this.inner.retryLater(queue, message, visibleAt));
    return this.timed("retryLater", performance.now(), this.inner.retryLater(queue, message, visibleAt));
  }
  release(queue: string, ids: readonly string[]): Promise<void> {
    return this.inner.release(queue, ids);
  }
  deadLetter(letter: DeadLetter): Promise<void> {
    if (this.atOnce) return this.now("deadLetter", this.inner.deadLetter(letter));
    return this.timed("deadLetter", performance.now(), this.inner.deadLetter(letter));
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

  /** A write that was done when its call returned (failed or not): reported now, taking no time. */
  private now(operation: StoreWrite["operation"], write: Promise<void>): Promise<void> {
    this.report(this.instant[operation]);
    return write;
  }

  /** Resolves and rejects as `write` does; a write that fails is timed too. */
  private timed(operation: StoreWrite["operation"], started: number, write: Promise<void>): Promise<void> {
    const done = (): void => this.report({ engine: this.engineName, operation, durationSeconds: (performance.now() - started) / 1000 });
    write.then(done, done);
    return write;
  }
}
