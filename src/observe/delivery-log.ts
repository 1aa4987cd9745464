import type { Inbox, RoutedEvent } from "../sources/source";
import type { EmitRecord, Store } from "../store/store";
import { eventIdOfCopy } from "../app/fan-out";
import { silentLogger, type Logger } from "../util/logger";
import type { AppObserver, TaskRunOutcome, TaskRunStart } from "./app-observer";
import { DeliveryLogInbox } from "./delivery-log-inbox";
import { DeliveryLogStore } from "./delivery-log-store";

/** Parents remembered for the runs of what they emitted; past this many, the oldest are forgotten. */
const MAX_PARENTS = 10_000;

/**
 * One debug line per step of a delivery, each with the `202`'s id as `eventId`: the event
 * received (stored), each run started and ended, each value a run emitted (with the emitted
 * event's id as `eventId` and its parent's as `parentId`); every line of an emitted event's runs
 * (the runner's warnings and errors, its handler's ctx.logger) carries `parentId` too. Warnings
 * and errors about the event (retries, dead letters, timeouts) are the runner's own lines, which
 * carry the same `eventId`.
 *
 * Built only when the logger writes debug lines when the app starts (see debugEnabled): above
 * debug no wrapper, no hook, nothing runs per request or per run.
 */
export class DeliveryLog implements AppObserver {
  /** Emitted event id -> its parent's, for the emitted event's run lines (in this process). */
  private readonly parents = new Map<string, string>();
  /** `<queue>\0<message id>` -> what its completion emitted, until the run's outcome is reported. */
  private readonly emits = new Map<string, readonly EmitRecord[]>();

  constructor(private readonly logger: Logger) {}

  /** The inbox a source writes to, logging each event once it is stored. */
  wrapInbox(inbox: Inbox): Inbox {
    return new DeliveryLogInbox(
      inbox,
      (routed) => this.received(inbox.name, routed),
      // Answered 200 and stored in no queue: the line says why no task ran.
      (message) => this.logger.debug({ source: inbox.name, eventId: message.id, queues: [] }, "event received; no task takes it (unrouted)"),
    );
  }

  /** The store the runners use, noting what each completion emits. */
  wrapStore(store: Store): Store {
    return new DeliveryLogStore(store, (queue, id, emit) => {
      this.emits.set(`${queue}\u0000${id}`, emit);
      // A completion that failed is never reported as a run's end: its note is let go here.
      if (this.emits.size > MAX_PARENTS) this.emits.delete(this.emits.keys().next().value as string);
    });
  }

  parentOf(eventId: string): string | undefined {
    return this.parents.get(eventId);
  }

  onTaskStart(run: TaskRunStart): void {
    const eventId = eventIdOfCopy(run.eventId, run.task);
    const parentId = this.parents.get(eventId);
    this.logger.debug({ task: run.task, queue: run.queue, eventId, attempt: run.attempt, ...(parentId === undefined ? {} : { parentId }) }, "task run started");
  }

  onTaskRun(run: TaskRunOutcome): void {
    const eventId = eventIdOfCopy(run.eventId, run.task);
    const parentId = this.parents.get(eventId);
    const key = `${run.queue}\u0000${run.eventId}`;
    const emit = this.emits.get(key);
    if (emit !== undefined) this.emits.delete(key);
    // One id per emitted event: its copies for several consumers (`<id>@<task>`) share it.
    const emitted = emit === undefined || emit.length === 0 || run.next !== "done" ? undefined : [...new Set(emit.map((e) => baseOfEmitted(e.message.id)))];
    this.logger.debug(
      {
        task: run.task,
        queue: run.queue,
        eventId,
        attempt: run.attempt,
        outcome: run.outcome,
        next: run.next,
        durationMs: Math.round(run.durationSeconds * 1e6) / 1e3,
        ...(parentId === undefined ? {} : { parentId }),
        ...(emitted === undefined ? {} : { emitted }),
      },
      "task run ended",
    );
    if (run.next !== "retry" && parentId !== undefined) this.parents.delete(eventId);
    if (emitted === undefined || emit === undefined) return;
    for (const child of emitted) {
      const queues = emit.filter((e) => baseOfEmitted(e.message.id) === child).map((e) => e.queue);
      this.logger.debug({ task: run.task, eventId: child, parentId: eventId, queues }, "event emitted");
      this.parents.set(child, eventId);
    }
    while (this.parents.size > MAX_PARENTS) this.parents.delete(this.parents.keys().next().value as string);
  }

  private received(source: string, routed: RoutedEvent): void {
    const { copies } = routed;
    this.logger.debug({ source, eventId: routed.id, queues: copies.map((c) => c.queue) }, "event received");
  }
}

/** An emitted event's id: its copies for several consumers are `<id>@<task>`, and emitted ids hold no "@". */
function baseOfEmitted(id: string): string {
  const at = id.indexOf("@");
  return at === -1 ? id : id.slice(0, at);
}

/**
 * Whether the logger writes debug lines: pino's `isLevelEnabled`, else its `level`; a logger
 * with neither (but the silent one) is given the lines to filter itself.
 */
export function debugEnabled(logger: Logger): boolean {
  if (logger === silentLogger) return false;
  const pinoLike = logger as Logger & { isLevelEnabled?: (level: string) => boolean; level?: unknown };
  if (typeof pinoLike.isLevelEnabled === "function") return pinoLike.isLevelEnabled("debug");
  if (typeof pinoLike.level === "string") return pinoLike.level === "debug" || pinoLike.level === "trace";
  return true;
}
