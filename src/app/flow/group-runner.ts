import type { ClaimedGroups, EmitRecord, GroupRule, QueuedMessage, Store } from "../../store/store";
import { StoreRefusedError } from "../../store/store-errors";
import { errorMessage } from "../../util/logger";
import type { AppObserver } from "../../observe/app-observer";
import type { CoreApp } from "../core-app";
import type { OutcomeRegistry } from "../outcome-registry";
import type { RegisteredTask } from "../task-registry";
import type { RunHistory } from "../run-history";
import { TaskTimeoutError } from "../task-timeout";
import { RunObservation } from "../run-observation";
import { RunContext } from "../run-context";
import { RunDeadlines, type TimedRun } from "../run-deadlines";
import { revived } from "../dead-letter-message";
import type { Settled } from "../task-runner";
import type { PendingEmit } from "./run-emits";
import { failGroup, groupEmits } from "./group-outcome";
import { IdleWait } from "../idle-wait";
import { RetryWakes } from "../retry-wakes";

/** Fallback poll for retries coming due and for work another process queued. */
const POLL_MS = 1_000;

/**
 * Least time between two claims, and how many times the last claim's own duration must pass
 * before the next. On PostgreSQL a group claim counts every waiting event of the queue, and
 * arrivals (which can only fill a batch) must not have it run after each request; on the memory
 * and embedded stores a claim costs what it hands out (group-index.ts), so this only groups the
 * arrivals of a few milliseconds into one claim.
 */
const MIN_CLAIM_GAP_MS = 10;
const CLAIM_GAP_FACTOR = 2;

/** A group's run: its messages (oldest first) and the observation of the run, made for its newest. */
interface GroupRun extends TimedRun {
  readonly messages: readonly QueuedMessage[];
  readonly observation: RunObservation;
  readonly ctx: RunContext;
}

/** What a group runner needs of the app. */
export interface GroupRunnerParts {
  readonly app: CoreApp;
  readonly store: Store;
  readonly outcomes: OutcomeRegistry;
  readonly observer?: AppObserver | undefined;
  readonly tracing?: boolean;
  readonly history?: RunHistory | undefined;
}

/**
 * Runs a debounced or batched task: the store decides which groups of its queue are due
 * (`claimGroups`, under the engine's lock), and each group runs the handler once. Success
 * removes the whole group with what it emitted in one step (`completeGroup`); a failure
 * retries every message of the group, and a PermanentError, or the last attempt, makes each of
 * them a dead letter. The messages stay in the store while they collect, so a restart forgets
 * nothing. Claims again when the first waiting group falls due (`nextDueAt`) and when the queue
 * changes.
 */
export class GroupRunner {
  private inFlight = 0;
  /** Outcomes whose store write has not landed yet. */
  private recording = 0;
  private pumping = false;
  private wanted = false;
  private stopping = false;
  private paused = false;
  /** Messages left collecting at the last claim (status and metrics). */
  private lastCollecting = 0;
  private readonly rule: GroupRule;
  private readonly deadlines: RunDeadlines<GroupRun>;
  private readonly claimGroups: NonNullable<Store["claimGroups"]>;
  private readonly completeGroup: NonNullable<Store["completeGroup"]>;
  private unwatch: (() => void) | undefined;
  private poller: NodeJS.Timeout | undefined;
  private dueTimer: NodeJS.Timeout | undefined;
  private dueAt = Infinity;
  private readonly retryWakes = new RetryWakes(() => this.wake());
  private readonly idleWait = new IdleWait();
  /** After a store failure, no claiming before this time (ms since epoch). */
  private pausedUntil = 0;
  /** No claim before this time (ms since epoch): see MIN_CLAIM_GAP_MS. */
  private nextClaimAt = 0;

  constructor(
    private readonly task: RegisteredTask,
    private readonly parts: GroupRunnerParts,
  ) {
    const { store } = parts;
    if (task.group === undefined) throw new Error(`task "${task.name}" has neither debounce nor batch`);
    if (store.claimGroups === undefined || store.completeGroup === undefined) throw groupsUnsupported(task, store);
    this.rule = task.group.rule;
    this.claimGroups = store.claimGroups.bind(store);
    this.completeGroup = store.completeGroup.bind(store);
    this.deadlines = new RunDeadlines(task.timeoutMs, (run) => this.timedOut(run));
  }

  get queue(): string {
    return this.task.queue;
  }

  /** Group tasks have no shared limits: the store's grouping is their flow control. */
  get flow(): undefined {
    return undefined;
  }

  /**
   * Messages waiting in groups not yet due, as the last claim counted them. A paused runner
   * claims nothing, so its last count goes stale: every waiting message not delayed collects
   * (the stats bound this by what waits).
   */
  get collecting(): number {
    return this.paused ? Number.MAX_SAFE_INTEGER : this.lastCollecting;
  }

  get running(): number {
    return this.inFlight;
  }

  start(): void {
    this.unwatch = this.parts.store.watch(this.task.queue, () => this.wake());
    this.poller = setInterval(() => this.wake(), POLL_MS);
    this.poller.unref();
    this.wake();
  }

  /** Paused: claims no group (runs going on finish), the groups go on collecting. Resumed: claims at once. */
  setPaused(paused: boolean): void {
    if (this.paused === paused) return;
    this.paused = paused;
    if (!paused) this.wake();
  }

  /** Stops claiming; waits up to `timeoutMs` for running groups. Unfinished groups stay in the store. */
  async stop(timeoutMs: number): Promise<boolean> {
    this.stopping = true;
    this.unwatch?.();
    if (this.poller !== undefined) clearInterval(this.poller);
    if (this.dueTimer !== undefined) clearTimeout(this.dueTimer);
    this.retryWakes.clear();
    if (this.idle()) return true;
    const drained = await this.idleWait.until(timeoutMs);
    if (!drained) {
      this.task.logger.warn({ inFlight: this.inFlight }, `shutdown timeout: groups still running ${this.parts.store.durable ? "stay in the store for the next start" : "are abandoned, and the memory store loses them"}`);
      // Their late ends or timeouts would write to a closed store (and tell "retry" listeners).
      this.deadlines.abandonAll();
    }
    return drained;
  }

  /** The queue may have changed (an arrival, a poll, a group's end): claim on the next turn. */
  private wake(): void {
    if (this.pumping) {
      this.wanted = true;
      return;
    }
    if (this.stopping || this.paused || this.inFlight >= this.task.concurrency) return;
    this.pumping = true;
    // At the earliest the next turn: the arrivals of one turn are looked at together.
    const wait = this.nextClaimAt - Date.now();
    if (wait > 0) setTimeout(() => void this.pump(), wait).unref();
    else setImmediate(() => void this.pump());
  }

  private async pump(): Promise<void> {
    try {
      // One claim a turn: the next comes through wake(), after the gap (MIN_CLAIM_GAP_MS).
      if (!this.stopping && !this.paused && this.inFlight < this.task.concurrency) {
        // Cleared first: a store refusing work is tried again by the poll, not in a tight loop.
        this.wanted = false;
        if (this.parts.store.failure !== undefined || Date.now() < this.pausedUntil) return;
        let claimed: ClaimedGroups;
        const started = Date.now();
        try {
          claimed = await this.claimGroups(this.task.queue, this.rule, this.task.concurrency - this.inFlight);
        } catch (error) {
          this.task.logger.error({ err: error }, "cannot claim work from the store");
          return;
        } finally {
          this.nextClaimAt = Date.now() + Math.max(MIN_CLAIM_GAP_MS, (Date.now() - started) * CLAIM_GAP_FACTOR);
        }
        this.lastCollecting = claimed.collecting;
        if (claimed.nextDueAt !== undefined) this.wakeAt(claimed.nextDueAt);
        if (this.stopping || this.paused) {
          // Claimed but not started: back to the store at once, for the next start (or the resume).
          await this.release(claimed.groups);
          return;
        }
        for (const group of claimed.groups) this.run(group);
        // More may be due (slots left, or arrivals during the claim): wake() claims again, after the gap.
        if (claimed.groups.length > 0) this.wanted = true;
      }
    } finally {
      this.pumping = false;
      if (this.stopping) this.maybeIdle();
      else if (this.wanted) this.wake();
    }
  }

  private async release(groups: readonly QueuedMessage[][]): Promise<void> {
    const ids = groups.flatMap((g) => g.map((m) => m.id));
    if (ids.length === 0) return;
    await this.parts.store.release(this.task.queue, ids).catch((error: unknown) => this.task.logger.warn({ err: error }, "cannot give back claimed groups; they come back when the store restarts or their lease ends"));
  }

  /** One timer, for the earliest group still collecting. */
  private wakeAt(at: number): void {
    if (this.dueTimer !== undefined && this.dueAt <= at) return;
    if (this.dueTimer !== undefined) clearTimeout(this.dueTimer);
    this.dueAt = at;
    this.dueTimer = setTimeout(() => {
      this.dueTimer = undefined;
      this.dueAt = Infinity;
      this.wake();
    }, Math.max(1, at - Date.now()));
    this.dueTimer.unref();
  }

  private run(claimed: readonly QueuedMessage[]): void {
    const { task } = this;
    const newestClaimed = claimed[claimed.length - 1];
    // The group's attempt: the most any of its messages has had, plus this one.
    const attempts = Math.max(...claimed.map((m) => m.attempts));
    if (attempts >= task.retry.attempts) {
      // Runs that never reported back (their process died) used the attempts up.
      const error = new Error(`not run again: its ${attempts} attempts were used by runs that never finished (${newestClaimed.lastError ?? "no error recorded"})`);
      const observation = new RunObservation(task, newestClaimed, false);
      this.recordFailure(claimed, observation, error);
      return;
    }
    let messages: QueuedMessage[];
    try {
      messages = claimed.map((m) => revived(task, m));
    } catch (error) {
      this.recordFailure(claimed, new RunObservation(task, newestClaimed, false), new Error(`an event's body cannot be rebuilt from its raw bytes: ${errorMessage(error)}`));
      return;
    }
    const newest = { ...messages[messages.length - 1], attempts };
    const payloads = messages.map((m) => m.payload);
    const observation = new RunObservation(task, newest, this.parts.tracing === true, this.parts.observer);
    const ctx = new RunContext(this.parts.app, task, newest, observation, payloads);
    const run: GroupRun = { messages, observation, started: observation.started, ctx, deadlinePrev: undefined, deadlineNext: undefined, deadlineTracked: false };
    this.inFlight++;
    this.deadlines.add(run);
    let pending: Promise<unknown>;
    try {
      const event = this.rule.kind === "batch" ? payloads : newest.payload;
      pending = Promise.resolve(observation.call(task.handler, ctx, event));
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => this.handlerDone(run, true, result),
      (error: unknown) => this.handlerDone(run, false, error),
    );
  }

  private handlerDone(run: GroupRun, ok: boolean, value: unknown): void {
    const emits = run.ctx.ended();
    // Once timed out, the abandoned handler's late result settles nothing.
    if (!this.deadlines.delete(run)) return;
    run.observation.handlerDone();
    this.inFlight--;
    if (ok) this.recordSuccess(run, value, emits);
    else this.recordFailure(run.messages, run.observation, value);
  }

  private timedOut(run: GroupRun): void {
    const { task } = this;
    const error = new TaskTimeoutError(task.name, task.timeoutMs);
    run.observation.logger.error({ err: error, timeoutMs: task.timeoutMs, events: run.messages.length }, "task timed out: its slot is freed and the group's run counts as failed");
    run.observation.handlerDone();
    this.inFlight--;
    this.recordFailure(run.messages, run.observation, error);
  }

  private recordSuccess(run: GroupRun, result: unknown, sent: readonly PendingEmit[] | undefined): void {
    const { task } = this;
    const newest = run.messages[run.messages.length - 1];
    let emit: EmitRecord[] | undefined;
    try {
      emit = groupEmits(this.task, this.parts.app, newest, result, sent, run.observation);
    } catch (error) {
      return this.recordFailure(run.messages, run.observation, error);
    }
    this.recording++;
    this.completeGroup(task.queue, run.messages.map((m) => m.id), emit).then(
      () => {
        for (const message of run.messages) if (this.parts.outcomes.awaits(message.id)) this.parts.outcomes.settle(message.id, { ok: true, value: result });
        const settled: Settled = emit === undefined ? { next: "done", outcome: "success" } : { next: "done", outcome: "success", emitted: emit };
        this.settled(run.messages, run.observation, settled, undefined);
      },
      (error: unknown) => {
        this.recording--;
        if (error instanceof StoreRefusedError) return this.storeFailed(run.messages, run.observation, error);
        // Not the disk: what the run emitted cannot be stored (a BigInt, a cycle). A task failure.
        this.recordFailure(run.messages, run.observation, new Error(`the task's result cannot be stored: ${errorMessage(error)}`));
      },
    );
  }

  /** A thrown error, a timeout or an unstorable result: every message of the group is retried, or becomes a dead letter. */
  private recordFailure(messages: readonly QueuedMessage[], run: RunObservation, error: unknown): void {
    this.recording++;
    failGroup(this.task, this.parts, messages, run, error).then(
      (settled) => {
        // A retried group is due again then: claim at that time (its messages come back whole).
        if (settled.retryAt !== undefined) this.retryWakes.add(settled.retryAt);
        this.settled(messages, run, settled, error);
      },
      (writeError: unknown) => {
        this.recording--;
        if (writeError instanceof StoreRefusedError) return this.storeFailed(messages, run, writeError);
        // Its span ends all the same (an exporter drops a span never ended); the run is not counted.
        run.unrecorded(writeError);
        this.task.logger.error({ err: writeError }, "cannot record a group's outcome in the store");
        this.afterRecord();
      },
    );
  }

  /** The group's outcome is in the store: the run is reported once, and each of its events gets its run noted. */
  private settled(messages: readonly QueuedMessage[], run: RunObservation, settled: Settled, error: unknown): void {
    this.recording--;
    run.finished(this.parts.observer, settled, error);
    const history = this.parts.history;
    if (history !== undefined) {
      const newest = messages[messages.length - 1];
      for (const message of messages) {
        if (message === newest) history.ran(message, run, settled, settled.error ?? error, settled.emitted);
        else if (settled.next === "done" && this.rule.kind === "debounce") history.superseded(message, run);
        else history.ran(message, run, settled.emitted === undefined ? settled : { ...settled, emitted: undefined }, settled.error ?? error, undefined);
      }
    }
    this.afterRecord();
  }

  /** The store refuses writes: the group stays claimed until the store comes back; claiming pauses a moment. */
  private storeFailed(messages: readonly QueuedMessage[], run: RunObservation, error: StoreRefusedError): void {
    this.pausedUntil = Date.now() + POLL_MS;
    // Its span ends all the same; the run is not counted, as the group runs again.
    run.unrecorded(error);
    this.task.logger.error({ err: error, events: messages.length }, "cannot record a group's outcome in the store; pausing this task");
    void this.release([messages as QueuedMessage[]]);
    this.afterRecord();
  }

  private afterRecord(): void {
    if (this.stopping) this.maybeIdle();
    else this.wake();
  }

  private idle(): boolean {
    return this.inFlight === 0 && this.recording === 0 && !this.pumping;
  }

  private maybeIdle(): void {
    this.idleWait.settled(this.idle());
  }
}

/** The error an app starts with when a task needs groups its store cannot claim. */
export function groupsUnsupported(task: Pick<RegisteredTask, "name" | "group">, store: Pick<Store, "engine">): Error {
  const option = task.group?.rule.kind ?? "debounce";
  return new Error(`task "${task.name}" uses ${option}, which the ${store.engine} store does not support (it cannot claim groups of events); use the memory, embedded or PostgreSQL store`);
}
