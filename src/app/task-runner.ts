import { createHash } from "node:crypto";
import type { QueuedMessage, Store } from "../store/store";
import { StoreRefusedError } from "../store/store-errors";
import { errorMessage, type Logger } from "./logger";
import type { OutcomeRegistry } from "./outcome-registry";
import { backoffDelay } from "./retry-policy";
import type { RegisteredTask } from "./task-registry";
import type { TaskContext } from "./task-context";
import type { CoreApp } from "./core-app";

const EMPTY = Buffer.alloc(0);
/** Fallback poll for delayed retries and for work another process queued. */
const POLL_MS = 1_000;

/**
 * Runs one task: claims messages from its queue up to its concurrency, calls the handler,
 * and records the outcome in the store (complete + emit, retry with backoff, or dead letter).
 * A message leaves the store only after its handler succeeded: delivery is at-least-once.
 */
export class TaskRunner {
  private inFlight = 0;
  private pumping = false;
  private pumpQueued = false;
  /** After a store failure, no claiming before this time (ms since epoch). */
  private pausedUntil = 0;
  private wanted = false;
  private stopping = false;
  private unwatch: (() => void) | undefined;
  private poller: NodeJS.Timeout | undefined;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly task: RegisteredTask,
    private readonly app: CoreApp,
    private readonly store: Store,
    private readonly outcomes: OutcomeRegistry,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.unwatch = this.store.watch(this.task.queue, () => this.pump());
    this.poller = setInterval(() => this.pump(), POLL_MS);
    this.poller.unref();
    this.pump();
  }

  /** Stops claiming; waits up to `timeoutMs` for running handlers. Unfinished work stays in the store. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    this.unwatch?.();
    if (this.poller) clearInterval(this.poller);
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    if (this.inFlight === 0 && !this.pumping) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const drained = await Promise.race([idle, timeout]);
    clearTimeout(timer);
    if (!drained) this.logger.warn("shutdown timeout: tasks still running stay in the store for the next start", { task: this.task.name, inFlight: this.inFlight });
    return drained;
  }

  get running(): number {
    return this.inFlight;
  }

  private pump(): void {
    if (this.stopping) return;
    if (this.pumping) {
      this.wanted = true;
      return;
    }
    this.pumping = true;
    this.fill().then(
      () => this.afterPump(),
      (error: unknown) => {
        this.logger.error("cannot claim work from the store", { task: this.task.name, error: errorMessage(error) });
        this.afterPump();
      },
    );
  }

  private afterPump(): void {
    this.pumping = false;
    if (this.stopping) return this.maybeIdle();
    if (this.wanted) {
      this.wanted = false;
      this.pumpSoon();
    }
  }

  /**
   * Pumps on the next turn of the event loop. A backlog with fast handlers would otherwise
   * claim, run and complete in one endless chain of promise callbacks, and HTTP requests,
   * timers and signals would wait for it.
   */
  private pumpSoon(): void {
    if (this.pumpQueued || this.stopping) return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private async fill(): Promise<void> {
    // A store that cannot write would fail every outcome: handlers would run again and again.
    if (this.store.failure !== undefined || Date.now() < this.pausedUntil) return;
    while (!this.stopping && this.inFlight < this.task.concurrency) {
      this.wanted = false;
      const batch = await this.store.claim(this.task.queue, this.task.concurrency - this.inFlight);
      if (this.stopping) {
        await this.store.release(this.task.queue, batch.map((m) => m.id));
        return;
      }
      if (batch.length === 0) return;
      for (const message of batch) this.run(message);
    }
  }

  private run(message: QueuedMessage): void {
    this.inFlight++;
    this.deliver(message)
      .catch((error: unknown) => {
        // The message stays in the store and comes back; claim nothing for a while meanwhile.
        this.pausedUntil = Date.now() + POLL_MS;
        this.logger.error("cannot record a task's outcome in the store; pausing this task", { task: this.task.name, eventId: message.id, error: errorMessage(error) });
      })
      .finally(() => {
        this.inFlight--;
        if (this.stopping) this.maybeIdle();
        else this.pumpSoon();
      });
  }

  private async deliver(message: QueuedMessage): Promise<void> {
    const { task, store } = this;
    const ctx: TaskContext = {
      app: this.app,
      task: task.name,
      eventId: message.id,
      attempt: message.attempts + 1,
      state: task.state,
      logger: task.logger,
      rawBody: message.raw ?? EMPTY,
    };
    let result: unknown;
    try {
      result = await task.handler(ctx, message.payload);
    } catch (error) {
      return this.failed(message, error);
    }
    const emit =
      task.emit !== undefined && result !== undefined
        ? { queue: task.emit, message: { id: emittedId(message.id, task.name), payload: result, attempts: 0, enqueuedAt: Date.now() } }
        : undefined;
    try {
      await store.complete(task.queue, message.id, emit);
    } catch (error) {
      if (error instanceof StoreRefusedError) throw error;
      // Not the disk: the result itself cannot be stored (a BigInt, a cycle). A task failure.
      return this.failed(message, new Error(`the task's result cannot be stored: ${errorMessage(error)}`));
    }
    this.outcomes.settle(message.id, { ok: true, value: result });
  }

  private async failed(message: QueuedMessage, error: unknown): Promise<void> {
    const { task, store } = this;
    const attempts = message.attempts + 1;
    const text = errorMessage(error);
    if (this.outcomes.settle(message.id, { ok: false, error })) {
      // The caller is told of the failure and will send again: retrying too would duplicate it.
      task.logger.warn("task failed; the waiting caller was answered with an error", { eventId: message.id, error: text });
      await store.complete(task.queue, message.id);
      return;
    }
    if (attempts >= task.retry.attempts) {
      task.logger.error("task failed for the last time; the event is kept as a dead letter", { eventId: message.id, attempts, error: text });
      await store.deadLetter({ queue: task.queue, task: task.name, message: { ...message, attempts, lastError: text }, error: text, attempts, diedAt: Date.now() });
      return;
    }
    const delay = backoffDelay(task.retry, attempts);
    task.logger.warn("task failed; retrying", { eventId: message.id, attempt: attempts, retryInMs: delay, error: text });
    await store.retryLater(task.queue, { ...message, attempts, lastError: text }, Date.now() + delay);
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.pump();
    }, delay + 5);
    timer.unref();
    this.retryTimers.add(timer);
  }

  private maybeIdle(): void {
    if (this.inFlight > 0 || this.pumping) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** Same input, same task: same id, so a redelivered input emits a message downstream can recognise. */
export function emittedId(inputId: string, task: string): string {
  return createHash("sha256").update(inputId).update("\u0000").update(task).digest("base64url").slice(0, 24);
}
