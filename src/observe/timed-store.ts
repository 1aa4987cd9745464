import { performance } from "node:perf_hooks";
import { ForwardingStore } from "../store/forwarding-store";
import type { DeadLetter, EmitRecord, QueuedMessage, Store } from "../store/store";
import type { StoreWrite } from "./app-observer";

/**
 * A store whose queue writes are timed (until they resolve, that is until durable) and
 * reported; everything else passes straight through. The app wraps its store in it when
 * metrics are on, so the engines know nothing of metrics. A store whose writes are done when
 * the call returns (Store.writesSettleAtOnce) has nothing to wait for: each write is reported
 * at once with a duration of 0, without two clock reads and a callback per write.
 */
export class TimedStore extends ForwardingStore {
  /** The engine's name, read once: it labels every write. */
  private readonly engineName: string;
  private readonly atOnce: boolean;
  /** With writes settled at once, one report per operation, made once: nothing allocated per write. */
  private readonly instant: Readonly<Record<StoreWrite["operation"], StoreWrite>>;

  constructor(
    inner: Store,
    private readonly report: (write: StoreWrite) => void,
  ) {
    super(inner);
    this.engineName = inner.engine;
    this.atOnce = inner.writesSettleAtOnce === true;
    const instant = (operation: StoreWrite["operation"]): StoreWrite => Object.freeze({ engine: this.engineName, operation, durationSeconds: 0 });
    this.instant = { enqueue: instant("enqueue"), complete: instant("complete"), retryLater: instant("retryLater"), deadLetter: instant("deadLetter") };
    const forwarded = this.completeNow;
    if (forwarded !== undefined) {
      this.completeNow = (queue, id, emit) => {
        this.report(this.instant.complete);
        forwarded(queue, id, emit);
      };
    }
  }

  override get writesSettleAtOnce(): boolean {
    return this.atOnce;
  }
  override enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    if (this.atOnce) return this.now("enqueue", this.inner.enqueue(queue, message, options));
    return this.timed("enqueue", performance.now(), this.inner.enqueue(queue, message, options));
  }
  override enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    if (this.atOnce) return this.now("enqueue", this.inner.enqueueAll(copies, options));
    return this.timed("enqueue", performance.now(), this.inner.enqueueAll(copies, options));
  }
  override complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    if (this.atOnce) return this.now("complete", this.inner.complete(queue, id, emit));
    return this.timed("complete", performance.now(), this.inner.complete(queue, id, emit));
  }
  override retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    if (this.atOnce) return this.now("retryLater", this.inner.retryLater(queue, message, visibleAt));
    return this.timed("retryLater", performance.now(), this.inner.retryLater(queue, message, visibleAt));
  }
  override deadLetter(letter: DeadLetter): Promise<void> {
    if (this.atOnce) return this.now("deadLetter", this.inner.deadLetter(letter));
    return this.timed("deadLetter", performance.now(), this.inner.deadLetter(letter));
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
