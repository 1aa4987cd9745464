import { EventEmitter } from "node:events";
import type { Logger } from "../util/logger";
import type { AppObserver, TaskRunOutcome } from "../observe/app-observer";

/** Sent when an event is kept as a dead letter (its retries ran out, it timed out for the last time, or a PermanentError). */
export interface DeadLetterEventPayload {
  readonly task: string;
  readonly queue: string;
  readonly eventId: string;
  /** Deliveries tried, this one included. */
  readonly attempts: number;
  /** "dead_letter", or "timeout" when the last run timed out. */
  readonly outcome: "dead_letter" | "timeout";
  readonly error: unknown;
}

/** Sent when a failed run is scheduled again. */
export interface RetryEventPayload {
  readonly task: string;
  readonly queue: string;
  readonly eventId: string;
  /** The attempt that failed (1 for the first delivery). */
  readonly attempt: number;
  /** "retry", or "timeout" when the run timed out. */
  readonly outcome: "retry" | "timeout";
  /** When the next attempt is due, ms since the epoch. */
  readonly retryAt: number;
  readonly error: unknown;
}

/** Events of a CoreApp, by name, with their payloads. */
export interface AppEventMap {
  deadLetter: DeadLetterEventPayload;
  retry: RetryEventPayload;
}

export type AppEventName = keyof AppEventMap;
export type AppEventListener<K extends AppEventName> = (payload: AppEventMap[K]) => void | Promise<void>;

/**
 * A typed event emitter for alerts: listeners run after the outcome is recorded in the
 * store; one that throws or rejects is logged, never fails the runner.
 */
export class AppEvents implements AppObserver {
  private readonly emitter = new EventEmitter();
  /** Both events are about runs that did not end done: successful runs need not be reported here. */
  readonly onlyUnfinishedRuns = true;

  constructor(private readonly logger: Logger) {}

  on<K extends AppEventName>(name: K, listener: AppEventListener<K>): void {
    this.emitter.on(name, listener);
  }

  off<K extends AppEventName>(name: K, listener: AppEventListener<K>): void {
    this.emitter.off(name, listener);
  }

  onTaskRun(run: TaskRunOutcome): void {
    const { task, queue, eventId, attempt, error } = run;
    if (run.next === "dead_letter") {
      this.emit("deadLetter", { task, queue, eventId, attempts: attempt, outcome: run.outcome === "timeout" ? "timeout" : "dead_letter", error });
    } else if (run.next === "retry" && run.retryAt !== undefined) {
      this.emit("retry", { task, queue, eventId, attempt, outcome: run.outcome === "timeout" ? "timeout" : "retry", retryAt: run.retryAt, error });
    }
  }

  private emit<K extends AppEventName>(name: K, payload: AppEventMap[K]): void {
    for (const listener of this.emitter.listeners(name) as Array<AppEventListener<K>>) {
      try {
        const result = listener(payload);
        if (result instanceof Promise) result.catch((error: unknown) => this.failed(name, error));
      } catch (error) {
        this.failed(name, error);
      }
    }
  }

  private failed(name: string, error: unknown): void {
    this.logger.error({ event: name, err: error }, `a "${name}" listener failed`);
  }
}
