import { performance } from "node:perf_hooks";
import type { QueuedMessage } from "../store/store";
import type { AppObserver } from "../observe/app-observer";
import { carrierOf } from "../observe/trace-context";
import { endTaskSpan, runIn, startTaskSpan, type StartedSpan } from "../observe/tracing";
import type { Logger } from "../util/logger";
import { eventIdOfCopy } from "./fan-out";
import { safeLogger } from "./safe-logger";
import type { RegisteredTask } from "./task-registry";
import type { Settled } from "./task-runner";
import type { TimedRun } from "./run-deadlines";

/** What the runner keeps about one run: its timing, its span, its logger. A class: one allocation per run. */
export class RunObservation implements TimedRun {
  /** performance.now() when the run started (its timeout counts from here). */
  readonly started: number;
  deadlinePrev: TimedRun | undefined = undefined;
  deadlineNext: TimedRun | undefined = undefined;
  deadlineTracked = false;
  private handlerEnded: number | undefined;
  private childLogger: Logger | undefined;
  private readonly traced: StartedSpan | undefined;

  constructor(
    private readonly task: RegisteredTask,
    readonly message: QueuedMessage,
    tracing: boolean,
    private readonly observer?: AppObserver,
    /** performance.now() at the start; the runs one claim starts share one reading of the clock. */
    started = performance.now(),
  ) {
    this.started = started;
    this.traced = tracing ? startTaskSpan(task.name, task.queue, message, message.attempts + 1) : undefined;
    // Undefined unless the debug delivery log is on: one property read per run otherwise.
    observer?.onTaskStart?.({ task: task.name, queue: task.queue, eventId: message.id, attempt: message.attempts + 1 });
  }

  /**
   * The run's logger (app, task, eventId, attempt), made on first use; it never throws. Its
   * eventId is the `202`'s id, also for one task's copy (`<id>@<task>`) of an event several take;
   * at debug, an emitted event's run names its parent (parentId).
   */
  get logger(): Logger {
    return (this.childLogger ??= safeLogger(this.task.logger.child(this.bindings())));
  }

  /** eventId and attempt; and at debug, the parent of an emitted event, so that its warnings name it too. */
  private bindings(): Record<string, unknown> {
    const eventId = eventIdOfCopy(this.message.id, this.task.name);
    const parentId = this.observer?.parentOf?.(eventId);
    return parentId === undefined ? { eventId, attempt: this.message.attempts + 1 } : { eventId, attempt: this.message.attempts + 1, parentId };
  }

  /** The run's span context as a stored carrier, for what the run emits. */
  get traceContext(): Record<string, string> | undefined {
    return this.traced === undefined ? undefined : carrierOf(this.traced.span.spanContext());
  }

  /** Calls the handler inside the run's span (with no span: directly, no closure). */
  call<A, B, T>(handler: (a: A, b: B) => T, a: A, b: B): T {
    const context = this.traced?.context;
    return context === undefined ? handler(a, b) : runIn(context, () => handler(a, b));
  }

  /** The handler returned or threw: the run's duration ends here, not when its outcome is written. */
  handlerDone(): void {
    this.handlerEnded = performance.now();
  }

  /** Milliseconds from the start to the handler's end (or to now, while it runs). */
  get durationMs(): number {
    return (this.handlerEnded ?? performance.now()) - this.started;
  }

  /** The run's outcome could not be written: its span ends with that error, and no outcome. */
  unrecorded(error: unknown): void {
    if (this.traced !== undefined) endTaskSpan(this.traced.span, undefined, error);
  }

  /** Ends the span and reports the run's outcome. */
  finished(observer: AppObserver | undefined, settled: Settled, error: unknown): void {
    if (this.traced !== undefined) endTaskSpan(this.traced.span, settled.outcome, error);
    if (observer?.onTaskRun === undefined || (settled.next === "done" && observer.onlyUnfinishedRuns === true)) return;
    const durationSeconds = ((this.handlerEnded ?? performance.now()) - this.started) / 1000;
    const { task, message } = this;
    observer.onTaskRun({
      task: task.name,
      queue: task.queue,
      eventId: message.id,
      attempt: message.attempts + 1,
      outcome: settled.outcome,
      next: settled.next,
      durationSeconds,
      error,
      retryAt: settled.retryAt,
    });
  }
}
