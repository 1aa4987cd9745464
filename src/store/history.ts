/**
 * The event history: what became of every accepted event after its tasks took it. The queues
 * stay the source of truth for work still to do; the history is a record kept beside them, for
 * people (the console, the CLI, `app.events`) and for replays. Each engine keeps it in its own
 * medium (memory, the embedded store's directory, PostgreSQL tables shared by replicas).
 *
 * Notes are written in the background, in batches, never awaited on the request path or by a
 * run: a crash may lose the notes of the last moments (documented), never an event.
 */

/**
 * How a run ended: the task returned, failed and will be retried, failed for good, or ran out
 * of time; `superseded`: a debounced task ran once for a burst of events, and this event was
 * handed to that run among the burst without being its newest (it was handled: ctx.batch).
 */
export type RunOutcome = "success" | "retry" | "dead_letter" | "timeout" | "superseded";

/**
 * Where one task's copy of an event stands. `failed`: its last run failed and it is not a dead
 * letter (it waits for a retry, or a caller waiting for the result was told of the failure).
 */
export type DeliveryStatus = "pending" | "succeeded" | "failed" | "dead";

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["pending", "succeeded", "failed", "dead"];

/**
 * Where an event stands: the worst of its deliveries' statuses, or `unrouted` for a source's
 * event no task took (its `on` and filters all passed it by). An unrouted event is kept with no
 * deliveries, so that a task added later can be fed by a replay; a source's event that was
 * routed always has at least one delivery.
 */
export type EventStatus = DeliveryStatus | "unrouted";

export const EVENT_STATUSES: readonly EventStatus[] = [...DELIVERY_STATUSES, "unrouted"];

export interface RunError {
  /** The error's class name ("TypeError", "PermanentError"). */
  readonly type: string;
  readonly message: string;
  readonly stack?: string;
}

/** One run of one task on one event. */
export interface RunRecord {
  readonly task: string;
  /** 1 for the first run of this delivery. */
  readonly attempt: number;
  /** Milliseconds since the epoch. */
  readonly startedAt: number;
  readonly durationMs: number;
  readonly outcome: RunOutcome;
  readonly error?: RunError;
  /** Ids of the messages its return value became (one per consuming task of the emit queue). */
  readonly emitted?: readonly string[];
}

/** Where an event came from: a webhook source, or a queue a task emitted to. */
export type EventOrigin = { readonly kind: "webhook"; readonly source: string } | { readonly kind: "queue"; readonly queue: string };

/** One task's copy of an event. */
export interface DeliveryNote {
  readonly task: string;
  /** The task's queue in the store. */
  readonly queue: string;
  /** Id of the copy in that queue (the event id, or `<id>@<task>` when several tasks take it). */
  readonly messageId: string;
}

/** An event as the history first learns of it: accepted from a source, emitted by a task, or replayed. */
export interface EventNote {
  /** The `202`'s id, an emitted message's id, or a replay's new id. */
  readonly id: string;
  readonly origin: EventOrigin;
  /** The sender's event name, when known. */
  readonly name?: string;
  /** Milliseconds since the epoch. */
  readonly receivedAt: number;
  /** One per task the event was handed to; none for a source's event no task took (unrouted). */
  readonly deliveries: readonly DeliveryNote[];
  /** The event as its tasks receive it; a webhook event's credential and signature headers already redacted. */
  readonly payload: unknown;
  /** The request's exact bytes, for a webhook event. */
  readonly raw?: Buffer;
  /**
   * True when `payload.body` is what parsing `raw` by its Content-Type (the `auto` parser)
   * gives, as the source parsed it on arrival: an engine may keep the raw bytes alone for the
   * body, without encoding or checking the parsed one (a task may since have changed it).
   */
  readonly bodyFromRaw?: true;
  /** For an emitted value: the event whose run emitted it. */
  readonly parentId?: string;
  /** For a replay: the event it replays. */
  readonly replayOf?: string;
  /** W3C trace id of the work that made it, when traced. */
  readonly traceId?: string;
}

/** A run ended: what it did, and where its delivery stands now. */
export interface RunNote {
  /** The history id of the event (not the copy's message id). */
  readonly eventId: string;
  readonly run: RunRecord;
  readonly status: DeliveryStatus;
}

/** One task's copy of an event, as the history shows it. */
export interface DeliveryView extends DeliveryNote {
  readonly status: DeliveryStatus;
  /** Runs so far. */
  readonly attempts: number;
  /** Message of the last run's error, when it failed. */
  readonly lastError?: string;
}

/** An event in a list: enough to find it, without its body and runs. */
export interface EventSummary {
  readonly id: string;
  readonly origin: EventOrigin;
  readonly name?: string;
  readonly receivedAt: number;
  /** The worst of its deliveries' statuses: dead, then failed, then pending, then succeeded; `unrouted` when no task took a source's event. */
  readonly status: EventStatus;
  readonly deliveries: readonly DeliveryView[];
  readonly parentId?: string;
  readonly replayOf?: string;
}

/** An event in full: as received, every run, and its links. */
export interface HistoryEvent extends EventSummary {
  readonly payload: unknown;
  readonly raw?: Buffer;
  /** Oldest first. */
  readonly runs: readonly RunRecord[];
  /** Ids of its replays, oldest first. */
  readonly replays: readonly string[];
  /** Ids of the events its runs emitted. */
  readonly children: readonly string[];
  readonly traceId?: string;
}

export interface HistoryQuery {
  /** A webhook source's label. */
  readonly source?: string;
  /** Events handed to this task; with `status`, that task's delivery must have it. */
  readonly task?: string;
  /** Events with a delivery in this status; `unrouted`: a source's events no task took (none with `task`). */
  readonly status?: EventStatus;
  /** Received at or after (ms since the epoch). */
  readonly since?: number;
  /** Received before (ms since the epoch). */
  readonly until?: number;
  /**
   * `path=value`: a field of the JSON body (dotted path, `repository.full_name=octo/repo`) whose
   * value, as text, equals `value`. Anything else: an event id, or a header's value, equal to it.
   */
  readonly search?: string;
  /** Default 50, at most 500. */
  readonly limit?: number;
  /** From the previous page's `next`. */
  readonly cursor?: string;
}

export interface HistoryPage {
  /** Newest first. */
  readonly events: readonly EventSummary[];
  /** Cursor of the next (older) page; absent on the last page. */
  readonly next?: string;
}

/** Counts of one task's deliveries of events received in one time bucket (console overview). */
export interface ActivityRow {
  readonly task: string;
  /** The webhook source's label; absent for a queue's events. */
  readonly source?: string;
  /** Start of the bucket, ms since the epoch. */
  readonly bucketStart: number;
  readonly received: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly dead: number;
  readonly pending: number;
}

export interface HistoryRetention {
  /** Events received longer ago than this are pruned (default 7 days). */
  readonly retainMs: number;
  /** Beyond this many events, the oldest are pruned (the memory store: default 10,000; others: no bound unless set). */
  readonly maxEvents?: number;
}

/** An engine's history. */
export interface HistoryStore {
  /**
   * Queued for the background writer; never throws for a write failure (logged by the engine).
   * The note's payload is the object a task may receive and change: the engine keeps it as it
   * is at the call (encodes or copies it before returning).
   */
  noteEvent(note: EventNote): void;
  noteRun(note: RunNote): void;
  /** Resolves once every note made before the call is written (stop(), tests). */
  flush(): Promise<void>;
  list(query: HistoryQuery): Promise<HistoryPage>;
  get(id: string): Promise<HistoryEvent | undefined>;
  /** Per task and bucket, for events received since `since`. */
  activity(since: number, bucketMs: number): Promise<ActivityRow[]>;
  /** Removes events received before `before`, then the oldest beyond `maxEvents`; returns how many went. */
  prune(before: number, maxEvents?: number): Promise<number>;
  /** Events kept and the bytes they take (approximate where the engine cannot tell exactly). */
  size(): Promise<{ readonly events: number; readonly bytes: number }>;
}

/** Tasks paused by name: their events are accepted and stored, none runs until resumed. */
export interface PauseStore {
  paused(): Promise<ReadonlySet<string>>;
  /** Durable on durable engines; on a shared engine, told to every replica (see watch). */
  setPaused(task: string, paused: boolean): Promise<void>;
  /** Calls `listener` when the paused set may have changed (this process or another replica). */
  watch(listener: () => void): () => void;
}
