import { performance } from "node:perf_hooks";
import type { DeliveryNote, DeliveryStatus, EventNote, EventOrigin, HistoryStore, RunError, RunRecord } from "../store/history";
import type { EmitRecord, QueuedMessage } from "../store/store";
import { redactSecretHeaders } from "../util/redact-headers";
import { errorMessage, type Logger } from "../util/logger";
import type { RunObservation } from "./run-observation";
import { emittedId, type Settled } from "./task-runner";

/** Where a delivery stands after a run, by what became of it. */
const STATUS_AFTER: Readonly<Record<Settled["next"], DeliveryStatus>> = { done: "succeeded", retry: "failed", dead_letter: "dead", answered: "failed" };

/**
 * What one task's runner tells the history when a run's outcome is recorded: the run, and
 * the value it emitted as an event of its own, linked to its parent. Notes are queued for the
 * engine's background writer; nothing here waits.
 */
export class RunHistory {
  private readonly copySuffix: string;
  /** Of the values it emits, one for all their notes. */
  private readonly emitOrigin: EventOrigin | undefined;

  constructor(
    private readonly history: HistoryStore,
    private readonly task: string,
    /** The emit queue's name, when the task emits. */
    private readonly emitQueue: string | undefined,
    /** True when the task's queue holds one copy of events several tasks take: its ids end in `@<task>`. */
    private readonly sharesEvents: boolean,
    /** The task consuming a physical queue. */
    private readonly taskOfQueue: (queue: string) => string | undefined,
    private readonly logger: Logger,
  ) {
    this.copySuffix = `@${task}`;
    this.emitOrigin = emitQueue === undefined ? undefined : Object.freeze({ kind: "queue", queue: emitQueue });
  }

  /** The history id of the event a message of this task's queue is a copy of. */
  eventIdOf(messageId: string): string {
    return this.sharesEvents && messageId.endsWith(this.copySuffix) ? messageId.slice(0, -this.copySuffix.length) : messageId;
  }

  /** Never throws: a note that cannot be made is logged, and the runner goes on. */
  ran(message: QueuedMessage, run: RunObservation | undefined, settled: Settled, error: unknown, emitted: readonly EmitRecord[] | undefined): void {
    try {
      this.note(message, run, settled, error, emitted);
    } catch (noteError) {
      this.logger.error({ eventId: this.eventIdOf(message.id), err: noteError }, "cannot note a run in the event history");
    }
  }

  /**
   * A debounced run took this event with its burst, and the burst's newest as its `event`:
   * noted as handled, with the run's start and duration, outcome "superseded".
   */
  superseded(message: QueuedMessage, run: RunObservation): void {
    try {
      const record: RunRecord = { task: this.task, attempt: message.attempts + 1, startedAt: Math.round(performance.timeOrigin + run.started), durationMs: run.durationMs, outcome: "superseded" };
      this.history.noteRun({ eventId: this.eventIdOf(message.id), run: record, status: "succeeded" });
    } catch (noteError) {
      this.logger.error({ eventId: this.eventIdOf(message.id), err: noteError }, "cannot note a run in the event history");
    }
  }

  private note(message: QueuedMessage, run: RunObservation | undefined, settled: Settled, error: unknown, emitted: readonly EmitRecord[] | undefined): void {
    const eventId = this.eventIdOf(message.id);
    const record: { -readonly [K in keyof RunRecord]: RunRecord[K] } = {
      task: this.task,
      attempt: message.attempts + 1,
      startedAt: run === undefined ? Date.now() : Math.round(performance.timeOrigin + run.started),
      durationMs: run === undefined ? 0 : run.durationMs,
      outcome: settled.outcome,
    };
    if (settled.outcome !== "success") record.error = runError(error);
    if (emitted !== undefined && emitted.length > 0) record.emitted = emitted.map((e) => e.message.id);
    this.history.noteRun({ eventId, run: record, status: STATUS_AFTER[settled.next] });
    if (emitted !== undefined && emitted.length > 0 && this.emitOrigin !== undefined) this.noteEmitted(settled.valueId ?? emittedId(message.id, this.task), eventId, emitted, this.emitOrigin);
  }

  /** The emitted value, as an event of its queue: one note for all its copies. */
  private noteEmitted(id: string, parentId: string, copies: readonly EmitRecord[], origin: EventOrigin): void {
    const first = copies[0].message;
    const deliveries: DeliveryNote[] = [];
    for (const copy of copies) {
      // A queue no task consumes holds the value itself: no delivery yet.
      const task = this.taskOfQueue(copy.queue);
      if (task !== undefined) deliveries.push({ task, queue: copy.queue, messageId: copy.message.id });
    }
    // An emitted value may carry its input's headers on: they are redacted as a webhook event's are.
    const note: { -readonly [K in keyof EventNote]: EventNote[K] } = { id, origin, receivedAt: first.enqueuedAt, deliveries, payload: redactSecretHeaders(first.payload), parentId };
    const traceId = traceIdOf(first.traceContext);
    if (traceId !== undefined) note.traceId = traceId;
    this.history.noteEvent(note);
  }
}

/** The W3C trace id in a stored trace context (`traceparent` is version-traceid-spanid-flags). */
export function traceIdOf(context: Readonly<Record<string, string>> | undefined): string | undefined {
  const parent = context?.traceparent;
  if (parent === undefined) return undefined;
  const parts = parent.split("-");
  return parts.length >= 4 && parts[1].length === 32 ? parts[1] : undefined;
}

/** An error as the history keeps it: its class name, message and stack. */
export function runError(error: unknown): RunError {
  if (error instanceof Error) {
    const ctor = (error as { constructor?: { name?: unknown } }).constructor?.name;
    const type = typeof ctor === "string" && ctor !== "" && ctor !== "Error" ? ctor : error.name || "Error";
    const message = errorMessage(error);
    return typeof error.stack === "string" ? { type, message, stack: error.stack } : { type, message };
  }
  return { type: error === null ? "null" : typeof error, message: errorMessage(error) };
}
