import { performance } from "node:perf_hooks";
import type { Span } from "@opentelemetry/api";
import type { QueuedMessage } from "../store/store";
import type { AppObserver } from "../observe/app-observer";
import { carrierOf } from "../observe/trace-context";
import { endTaskSpan, runIn, startTaskSpan, type StartedSpan } from "../observe/tracing";
import type { Logger } from "./logger";
import { safeLogger } from "./safe-logger";
import type { RegisteredTask } from "./task-registry";
import type { Settled } from "./task-runner";

/** What the runner keeps about one run: its timing, its span, its logger. */
export interface RunObservation {
  /** The run's logger (app, task, eventId, attempt), made on first use; it never throws. */
  readonly logger: Logger;
  /** The run's span context as a stored carrier, for what the run emits. */
  readonly traceContext: Record<string, string> | undefined;
  /** Runs the handler inside the run's span. */
  call<T>(handler: () => T): Promise<Awaited<T>>;
  /** Ends the span and reports the run's outcome. */
  finished(observer: AppObserver | undefined, settled: Settled, error: unknown): void;
}

export function runContext(task: RegisteredTask, message: QueuedMessage, tracing: boolean): RunObservation {
  const attempt = message.attempts + 1;
  const started = performance.now();
  const traced: StartedSpan | undefined = tracing ? startTaskSpan(task.name, task.queue, message, attempt) : undefined;
  let logger: Logger | undefined;
  let handlerEnded: number | undefined;
  return {
    get logger() {
      return (logger ??= safeLogger(task.logger.child({ eventId: message.id, attempt })));
    },
    get traceContext() {
      return traced === undefined ? undefined : carrierOf(traced.span.spanContext());
    },
    async call<T>(handler: () => T): Promise<Awaited<T>> {
      try {
        return await runIn(traced?.context, handler);
      } finally {
        handlerEnded = performance.now();
      }
    },
    finished(observer, settled, error) {
      const durationSeconds = ((handlerEnded ?? performance.now()) - started) / 1000;
      if (traced !== undefined) endTaskSpan(traced.span as Span, settled.outcome, error);
      observer?.onTaskRun?.({
        task: task.name,
        queue: task.queue,
        eventId: message.id,
        attempt,
        outcome: settled.outcome,
        next: settled.next,
        durationSeconds,
        error,
        retryAt: settled.retryAt,
      });
    },
  };
}
