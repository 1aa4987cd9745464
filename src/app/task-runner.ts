import { performance } from "node:perf_hooks";
import type { EmitRecord, QueuedMessage, Store } from "../store/store";
import { StoreRefusedError } from "../store/store-errors";
import { handedOnForm } from "../store/payload-codec";
import { errorMessage, type Logger } from "../util/logger";
import { derivedEventId } from "../util/event-id";
import type { OutcomeRegistry } from "./outcome-registry";
import { backoffDelay } from "./retry-policy";
import type { RegisteredTask } from "./task-registry";
import type { CoreApp } from "./core-app";
import { PermanentError } from "./permanent-error";
import { TaskTimeoutError } from "./task-timeout";
import { RunObservation } from "./run-observation";
import { eventIdOfCopy } from "./fan-out";
import { revived, writeDeadLetter } from "./dead-letter-message";
import { RunDeadlines } from "./run-deadlines";
import type { AppObserver, TaskRunOutcomeName } from "../observe/app-observer";
import type { RunHistory } from "./run-history";
import type { ClaimFlow } from "../store/store";
import { claimFlow } from "./flow/flow-options";
import { FlowGate } from "./flow/flow-gate";
import { emitRecords, type PendingEmit } from "./flow/run-emits";
import { RunContext } from "./run-context";
import { IdleWait } from "./idle-wait";
import { RetryWakes } from "./retry-wakes";

/** Fallback poll for delayed retries and for work another process queued. */
const POLL_MS = 1_000;

/** Outcomes waiting for their store write, per unit of concurrency, before claiming pauses. */
const RECORDING_PER_SLOT = 4;

/**
 * Messages per unit of concurrency a runner claims in one turn of the event loop by pumping
 * again as soon as a run ends; past it the next claim waits for the next turn, so that a backlog
 * of fast handlers leaves turns to requests and timers.
 */
const CLAIMS_PER_TURN_PER_SLOT = 8;

/** A run recorded as done, the common case: one object for all of them. */
const DONE: Settled = Object.freeze({ next: "done", outcome: "success" });

/**
 * Runs one task: claims messages from its queue up to its concurrency, calls the handler,
 * and records the outcome in the store (complete + emit, retry with backoff, or dead letter).
 * A message leaves the store only after its handler succeeded: delivery is at-least-once.
 *
 * A handler's slot is free as soon as it returns; its outcome is written in the background
 * (a durable write takes a commit, and waiting for it would cap a task at concurrency ÷
 * commit time). Until that write lands the message stays claimed, and if the process dies
 * first it is delivered again.
 */
export class TaskRunner {
  private inFlight = 0;
  /** Outcomes whose store write has not landed yet. */
  private recording = 0;
  private readonly maxRecording: number;
  /** False once a claim came back short: the queue was empty, and only a signal refills it. */
  private mayHaveMore = true;
  /** Counts wake-ups, so that one arriving while a claim is out is not lost when the claim comes back short. */
  private signals = 0;
  private pumping = false;
  private pumpQueued = false;
  /** Claimed since the last pump on a turn of its own; at `maxClaimsPerTurn` the runner waits for the next turn. */
  private claimedThisTurn = 0;
  private readonly maxClaimsPerTurn: number;
  /** The runs still going, with one timer for their timeouts. */
  private readonly deadlines: RunDeadlines<RunObservation>;
  /** After a store failure, no claiming before this time (ms since epoch). */
  private pausedUntil = 0;
  private wanted = false;
  private stopping = false;
  /** Paused by app.pause(): nothing is claimed until resumed. */
  private paused = false;
  private unwatch: (() => void) | undefined;
  private poller: NodeJS.Timeout | undefined;
  private readonly retryWakes = new RetryWakes(() => this.wake());
  private readonly idleWait = new IdleWait();
  /** Flow limits enforced here, for engines whose claims do not (flow-gate.ts). */
  readonly gate: FlowGate | undefined;
  /** Flow limits the store's claims enforce (PostgreSQL). */
  private readonly claimFlow: ClaimFlow | undefined;
  private rateTimer: NodeJS.Timeout | undefined;
  private rateTimerAt = 0;
  /** Claimed messages the gate may hold before the runner stops claiming. */
  private readonly maxGateHeld: number;
  /** Whether anything reads a run's duration (the history, the observer's onTaskRun). */
  private readonly timesRuns: boolean;

  constructor(
    private readonly task: RegisteredTask,
    private readonly app: CoreApp,
    private readonly store: Store,
    private readonly outcomes: OutcomeRegistry,
    private readonly logger: Logger,
    /** Told of every run's outcome (metrics, events); runs are traced when `tracing`. */
    private readonly observer: AppObserver | undefined = undefined,
    private readonly tracing = false,
    /** Told of every run when the app keeps a history. */
    private readonly history: RunHistory | undefined = undefined,
  ) {
    this.maxRecording = task.concurrency * RECORDING_PER_SLOT;
    this.maxClaimsPerTurn = task.concurrency * CLAIMS_PER_TURN_PER_SLOT;
    this.deadlines = new RunDeadlines(task.timeoutMs, (run) => this.timedOut(run));
    const flow = task.flow;
    this.gate = flow !== undefined && !store.enforcesFlow ? new FlowGate(flow, () => this.wake()) : undefined;
    this.claimFlow = flow !== undefined && store.enforcesFlow ? claimFlow(flow, (at) => this.wakeAt(at)) : undefined;
    this.maxGateHeld = Math.max(1_000, task.concurrency * 64);
    this.timesRuns = history !== undefined || observer?.onTaskRun !== undefined;
  }

  get flow(): RegisteredTask["flow"] {
    return this.task.flow;
  }

  get queue(): string {
    return this.task.queue;
  }

  /** A wake-up at `at` (a rate window moving on); one timer, for the earliest asked. */
  private wakeAt(at: number): void {
    if (this.rateTimer !== undefined && this.rateTimerAt <= at) return;
    if (this.rateTimer !== undefined) clearTimeout(this.rateTimer);
    this.rateTimerAt = at;
    this.rateTimer = setTimeout(() => {
      this.rateTimer = undefined;
      this.wake();
    }, Math.max(1, at - Date.now()));
    this.rateTimer.unref();
  }

  start(): void {
    this.unwatch = this.store.watch(this.task.queue, () => this.wake());
    this.poller = setInterval(() => this.wake(), POLL_MS);
    this.poller.unref();
    this.wake();
  }

  /** Stops claiming; waits up to `timeoutMs` for running handlers. Unfinished work stays in the store. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    this.unwatch?.();
    if (this.poller) clearInterval(this.poller);
    this.retryWakes.clear();
    if (this.rateTimer !== undefined) clearTimeout(this.rateTimer);
    const held = this.gate?.drain() ?? [];
    if (held.length > 0) await this.store.release(this.task.queue, held.map((m) => m.id)).catch((error: unknown) => this.logger.warn({ err: error }, "cannot give back the messages held by flow limits; they come back when the store restarts or their lease ends"));
    if (this.idle()) return true;
    const drained = await this.idleWait.until(timeoutMs);
    if (!drained) {
      this.logger.warn({ inFlight: this.inFlight }, `shutdown timeout: tasks still running ${this.store.durable ? "stay in the store for the next start" : "are abandoned, and the memory store loses them"}`);
      // Their late ends or timeouts would write to a closed store (and tell "retry" listeners).
      this.deadlines.abandonAll();
    }
    return drained;
  }

  get running(): number {
    return this.inFlight;
  }

  /** Paused: claims nothing (runs going on finish). Resumed: claims at once. */
  setPaused(paused: boolean): void {
    if (this.paused === paused) return;
    this.paused = paused;
    if (!paused) this.wake();
  }

  /**
   * Something may have become available (an enqueue, a poll, a retry coming due). The claim
   * waits for the next turn of the event loop: the enqueues of one turn (the requests read in
   * one poll of the sockets) are then claimed together, instead of one claim per enqueue.
   */
  private wake(): void {
    this.mayHaveMore = true;
    this.signals++;
    // With every slot taken (a slow task), the run that frees one pumps: no pump per enqueue.
    if (this.inFlight < this.task.concurrency && this.recording < this.maxRecording) this.pumpSoon();
  }

  private pump(): void {
    if (this.stopping) return;
    if (this.pumping) {
      this.wanted = true;
      return;
    }
    this.pumping = true;
    // Flow limits are decided by the gate on claimed batches: such a task takes the claim path.
    if (this.store.claimNow !== undefined && this.gate === undefined) {
      this.fillNow();
      return this.afterPump();
    }
    this.fill().then(
      () => this.afterPump(),
      (error: unknown) => {
        this.logger.error({ err: error }, "cannot claim work from the store");
        this.afterPump();
      },
    );
  }

  private afterPump(): void {
    this.pumping = false;
    if (this.stopping) return this.maybeIdle();
    if (this.wanted) {
      this.wanted = false;
      this.pumpAgain();
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
    setImmediate(this.pumpNow);
  }

  /** Bound once: no closure per scheduled pump. */
  private readonly pumpNow = (): void => {
    this.pumpQueued = false;
    this.claimedThisTurn = 0;
    this.pump();
  };

  /**
   * A slot or a recording place came free and more may be waiting: claim again now, within this
   * turn's budget (a turn's arrivals are then all taken up, as they were when every enqueue
   * pumped), else on the next turn. A store whose claims are database statements is claimed
   * on the next turn: claiming as each run ends sent a claim per few free slots (twice the
   * claims, each planned and run by the database, for the same messages).
   */
  private pumpAgain(): void {
    if (this.claimedThisTurn < this.maxClaimsPerTurn && this.store.claimsAreStatements !== true) this.pump();
    else this.pumpSoon();
  }

  private async fill(): Promise<void> {
    // A store that cannot write would fail every outcome: handlers would run again and again.
    if (this.paused || this.store.failure !== undefined || (this.pausedUntil !== 0 && Date.now() < this.pausedUntil)) return;
    while (!this.stopping && !this.paused && this.mayHaveMore && this.inFlight < this.task.concurrency && this.recording < this.maxRecording) {
      this.wanted = false;
      const asked = this.task.concurrency - this.inFlight;
      if (this.gate !== undefined && this.gate.ready.length > 0) {
        const now = performance.now();
        for (let i = 0; i < asked && this.gate.ready.length > 0; i++) this.run(this.gate.take()!, now);
        continue;
      }
      // A gate full of held-back messages (a few keys with long backlogs) stops claiming until they drain.
      if (this.gate !== undefined && this.gate.held >= this.maxGateHeld) break;
      const signals = this.signals;
      const batch = await this.store.claim(this.task.queue, asked, this.claimFlow);
      // Paused while the claim was out (it may have waited for a connection, and taken an event
      // accepted after pause() resolved): back to the queue, untouched; resume claims it again.
      if (this.stopping || this.paused) {
        if (batch.length > 0 || this.stopping) await this.store.release(this.task.queue, batch.map((m) => m.id));
        return;
      }
      // A short batch means an empty queue, unless something arrived while the claim was out.
      this.mayHaveMore = batch.length === asked || this.signals !== signals;
      this.claimedThisTurn += batch.length;
      const now = batch.length === 0 ? 0 : performance.now();
      for (const message of this.gate === undefined ? batch : this.gate.admit(batch)) this.run(message, now);
    }
  }

  /**
   * fill() for a store that hands messages over at once (claimNow): claimed and started in one
   * loop, with no promise or array per claim.
   */
  private fillNow(): void {
    if (this.paused || this.store.failure !== undefined || (this.pausedUntil !== 0 && Date.now() < this.pausedUntil)) return;
    const { store, task } = this;
    // The runs started here share one reading of the clock (their timeouts count from it).
    let now = -1;
    try {
      while (!this.stopping && !this.paused && this.mayHaveMore && this.inFlight < task.concurrency && this.recording < this.maxRecording) {
        this.wanted = false;
        const message = store.claimNow!(task.queue);
        if (message === undefined) {
          this.mayHaveMore = false;
          return;
        }
        this.claimedThisTurn++;
        if (now === -1) now = performance.now();
        this.run(message, now);
      }
    } catch (error) {
      this.logger.error({ err: error }, "cannot claim work from the store");
    }
  }

  private run(claimed: QueuedMessage, now: number): void {
    if (claimed.attempts >= this.task.retry.attempts) {
      // Its attempts were all used by runs that never reported back (their process died or
      // stalled and the lease was taken back): running it again may take this process down too.
      const error = new Error(`not run again: its ${claimed.attempts} attempts were used by runs that never finished (${claimed.lastError ?? "no error recorded"})`);
      this.gate?.finished(claimed);
      this.record(claimed, false, error, new RunObservation(this.task, claimed, this.tracing));
      return;
    }
    let message: QueuedMessage;
    try {
      message = revived(this.task, claimed);
    } catch (error) {
      this.gate?.finished(claimed);
      // Observed like any failed run: counted, and told to the retry and deadLetter listeners.
      this.record(claimed, false, new Error(`the event's body cannot be rebuilt from its raw bytes: ${errorMessage(error)}`), new RunObservation(this.task, claimed, this.tracing));
      return;
    }
    this.inFlight++;
    const { task } = this;
    const run = new RunObservation(task, message, this.tracing, this.observer, now);
    this.deadlines.add(run);
    let pending: Promise<unknown>;
    const ctx = new RunContext(this.app, task, message, run);
    try {
      pending = Promise.resolve(run.call(task.handler, ctx, message.payload));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => this.handlerDone(run, true, result, ctx.ended()),
      (error: unknown) => this.handlerDone(run, false, error, ctx.ended()),
    );
  }

  /** The handler settled: its slot is free, its outcome is written (unless it timed out before). */
  private handlerDone(run: RunObservation, ok: boolean, value: unknown, emits: readonly PendingEmit[] | undefined): void {
    // Once timed out, the abandoned handler's late result or failure settles nothing.
    if (!this.deadlines.delete(run)) return;
    // The end of the handler is read only by those told of the run's duration.
    if (this.timesRuns) run.handlerDone();
    this.inFlight--;
    this.gate?.finished(run.message);
    this.record(run.message, ok, value, run, emits);
    if (this.stopping) this.maybeIdle();
    else if (this.mayHaveMore) this.pumpAgain();
  }

  /** The handler outlived the task's timeoutMs: its slot is freed and the run counts as failed. */
  private timedOut(run: RunObservation): void {
    const { task } = this;
    const error = new TaskTimeoutError(task.name, task.timeoutMs);
    run.logger.error({ err: error, timeoutMs: task.timeoutMs }, "task timed out: its slot is freed and the run counts as failed");
    run.handlerDone();
    this.inFlight--;
    this.gate?.finished(run.message);
    this.record(run.message, false, error, run);
    if (this.stopping) this.maybeIdle();
    else if (this.mayHaveMore) this.pumpAgain();
  }

  /** Writes a handler's outcome to the store, in the background of the next claims. */
  private record(message: QueuedMessage, ok: boolean, value: unknown, run: RunObservation | undefined, emits?: readonly PendingEmit[]): void {
    this.recording++;
    let written: Settled | Promise<Settled | undefined>;
    try {
      written = ok ? this.succeeded(message, value, run, emits) : this.failed(message, value, run);
    } catch (error) {
      written = Promise.reject(error);
    }
    // A store whose writes settle at once (completeNow) settles the run in this same turn.
    if (!(written instanceof Promise)) return this.runSettled(message, run, written, ok, value);
    written.then(
      (settled) => this.runSettled(message, run, settled ?? DONE, ok, value),
      (error: unknown) => {
        // The message stays in the store and comes back. Only a failing store (refusing work)
        // pauses claiming: one event whose outcome cannot be written must not stall the others.
        const storeFailing = error instanceof StoreRefusedError;
        if (storeFailing) this.pausedUntil = Date.now() + POLL_MS;
        // Its span ends all the same (an exporter drops a span never ended); the run is not counted, as it runs again.
        run?.unrecorded(error);
        this.logger.error({ eventId: eventIdOfCopy(message.id, this.task.name), err: error }, storeFailing ? "cannot record a task's outcome in the store; pausing this task" : "cannot record a task's outcome in the store");
        this.recorded();
      },
    );
  }

  /** The run's outcome is in the store: its span ends, the observer is told, claiming goes on. */
  private runSettled(message: QueuedMessage, run: RunObservation | undefined, settled: Settled, ok: boolean, value: unknown): void {
    run?.finished(this.observer, settled, ok ? undefined : value);
    this.history?.ran(message, run, settled, settled.error ?? (ok ? undefined : value), settled.emitted);
    this.recorded();
  }

  private recorded(): void {
    this.recording--;
    if (this.stopping) this.maybeIdle();
    else if (this.mayHaveMore) this.pumpAgain();
  }

  /**
   * Completes the message, with what it emits, in one store write. Not async: no promise of its
   * own on the common path, and none at all (DONE, settled now) when the store has completeNow.
   */
  private succeeded(message: QueuedMessage, result: unknown, run?: RunObservation, sent?: readonly PendingEmit[]): Settled | Promise<Settled | undefined> {
    const { task, store } = this;
    let emit: EmitRecord[] | undefined;
    if (sent !== undefined) {
      try {
        emit = emitRecords(sent, (i) => emittedId(message.id, `${task.name}\u0000emit\u0000${i}`), run?.traceContext, (queue, m) => this.app.copiesFor(queue, m));
      } catch (error) {
        return this.failed(message, error, run);
      }
    }
    let valueId: string | undefined;
    if (task.emit !== undefined && result !== undefined) {
      let payload: unknown;
      try {
        // The form every engine hands back (a Map becomes a plain object in memory too); what no
        // engine can store fails here, naming the bad field: a task failure, retried, then a dead letter.
        // Plain data is copied in one walk instead of being encoded and decoded (see handedOnForm).
        payload = handedOnForm(result);
      } catch (error) {
        return this.failed(message, new Error(`the task's result cannot be stored: ${errorMessage(error)}`), run);
      }
      try {
        // One copy per consumer whose filter takes it, each with its consumer's ordering key.
        valueId = emittedId(message.id, task.name);
        const copies = this.app.copiesFor(task.emit, emitted(valueId, payload, run?.traceContext));
        emit = emit === undefined ? copies : [...copies, ...emit];
      } catch (error) {
        // Nothing is stored with a wrong key or a failed filter: the task fails, and is retried like any failure.
        return this.failed(message, error, run);
      }
    }
    const { completeNow } = store;
    if (completeNow !== undefined) {
      try {
        completeNow.call(store, task.queue, message.id, emit);
      } catch (error) {
        return this.completeFailed(message, error, run);
      }
      this.completed(message.id, result);
      return emit === undefined || this.history === undefined ? DONE : { ...DONE, emitted: emit, valueId };
    }
    return store.complete(task.queue, message.id, emit).then(
      () => {
        this.completed(message.id, result);
        return emit === undefined || this.history === undefined ? undefined : { ...DONE, emitted: emit, valueId };
      },
      (error: unknown) => this.completeFailed(message, error, run),
    );
  }

  /** A caller waiting for the run (ack "processed", reply "result") gets its result. */
  private completed(id: string, result: unknown): void {
    if (this.outcomes.awaits(id)) this.outcomes.settle(id, { ok: true, value: result });
  }

  private completeFailed(message: QueuedMessage, error: unknown, run: RunObservation | undefined): Promise<Settled> {
    if (error instanceof StoreRefusedError) throw error;
    // Not the disk: the result itself cannot be stored (a BigInt, a cycle). A task failure.
    return this.failed(message, new Error(`the task's result cannot be stored: ${errorMessage(error)}`), run);
  }

  private async failed(message: QueuedMessage, error: unknown, run?: RunObservation): Promise<Settled> {
    const { task, store } = this;
    const attempts = message.attempts + 1;
    const text = errorMessage(error);
    const logger = run?.logger ?? task.logger.child({ eventId: eventIdOfCopy(message.id, task.name), attempt: attempts });
    const failure: TaskRunOutcomeName | undefined = error instanceof TaskTimeoutError ? "timeout" : undefined;
    if (this.outcomes.settle(message.id, { ok: false, error })) {
      // The caller is told of the failure and will send again: retrying too would duplicate it.
      logger.warn({ err: error }, "task failed; the waiting caller was answered with an error");
      await store.complete(task.queue, message.id);
      return { next: "answered", outcome: failure ?? "retry", error };
    }
    if (attempts >= task.retry.attempts || error instanceof PermanentError) {
      logger.error({ err: error, attempts }, error instanceof PermanentError ? "task failed permanently; the event is kept as a dead letter" : "task failed for the last time; the event is kept as a dead letter");
      const stack = error instanceof Error && typeof error.stack === "string" ? error.stack : text;
      await writeDeadLetter(store, task, { ...message, attempts, lastError: stack }, text, logger);
      return { next: "dead_letter", outcome: failure ?? "dead_letter", error };
    }
    const delay = backoffDelay(task.retry, attempts);
    logger.warn({ err: error, retryInMs: delay }, "task failed; retrying");
    const retryAt = Date.now() + delay;
    await store.retryLater(task.queue, { ...message, attempts, lastError: text }, retryAt);
    this.retryWakes.add(retryAt);
    return { next: "retry", outcome: failure ?? "retry", retryAt, error };
  }

  private idle(): boolean {
    return this.inFlight === 0 && this.recording === 0 && !this.pumping;
  }

  private maybeIdle(): void {
    this.idleWait.settled(this.idle());
  }
}

/** What became of a run, once recorded. */
export interface Settled {
  readonly next: "done" | "retry" | "dead_letter" | "answered";
  readonly outcome: TaskRunOutcomeName;
  readonly retryAt?: number;
  /** What a successful run emitted (told to the history). */
  readonly emitted?: readonly EmitRecord[];
  /** The id of the message its return value became (emittedId of the input and the task), when it returned one: the history's id for that value, not hashed twice. */
  readonly valueId?: string;
  /** Why it failed: what the handler threw, or why its result could not be stored (told to the history). */
  readonly error?: unknown;
}

/** The message a task's result becomes; it carries the run's trace context when there is one. */
function emitted(id: string, payload: unknown, traceContext: Record<string, string> | undefined): QueuedMessage {
  const message = { id, payload, attempts: 0, enqueuedAt: Date.now() };
  return traceContext === undefined ? message : { ...message, traceContext };
}

/** Same input, same task: same id, so a redelivered input emits a message downstream can recognise (see derivedEventId). */
export function emittedId(inputId: string, task: string): string {
  return derivedEventId(inputId, task);
}
