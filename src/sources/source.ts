import type { Logger } from "../util/logger";
import type { ListenerRegistry } from "../http/listener-registry";
import type { TrustProxy } from "../http/trust-proxy";
import type { QueuedMessage, StateStore, StoreRefusal } from "../store/store";
import type { AppObserver } from "../observe/app-observer";

/** How the first delivery of an event ended, for sources that answer with it. */
export type DeliveryOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown }
  | { readonly ok: false; readonly timedOut: true };

/** A pending wait for an event's first delivery (see Inbox.expect). */
export interface OutcomeWait {
  readonly promise: Promise<DeliveryOutcome>;
  /** Stops waiting; the event is then retried and dead-lettered as usual. */
  cancel(): void;
}

/**
 * The door a source pushes events through: one per task. It hides the store and the runner,
 * so a source knows nothing of either.
 */
export interface Inbox {
  readonly task: string;
  /** Synchronous check done before reading a request: a refusal means 503 and no event. */
  admit(): StoreRefusal | undefined;
  /**
   * Stores the event; resolves once it is as durable as the app's store makes it. Throws at
   * once, storing nothing, when the task's ordering key function fails (OrderingKeyError).
   */
  accept(message: QueuedMessage): Promise<void>;
  /**
   * Registers interest in the first delivery of `id` before it is accepted. A failure reported
   * to a waiter is final: the caller is told, so the event is not retried.
   */
  expect(id: string, timeoutMs: number): OutcomeWait;
  /** State kept in the app's store (per source, e.g. deduplication markers). */
  state(namespace: string): StateStore;
}

/** What the app gives a source when it attaches it. */
export interface SourceRuntime {
  readonly listeners: ListenerRegistry;
  readonly trustProxy: TrustProxy | undefined;
  readonly logger: Logger;
  /** Told how every request ended (metrics, refusal logs); undefined when nothing watches. */
  readonly observer?: AppObserver;
  /** Whether requests get a server span (@opentelemetry/api; a no-op without an SDK). */
  readonly tracing?: boolean;
}

/**
 * A push source: something outside the app that produces events for one task. Queue sources
 * are plain strings and need no object. New kinds of source implement this interface.
 */
export interface Source {
  readonly kind: string;
  /** Human description for errors and logs, e.g. "WebhookSource POST 127.0.0.1:8080/hooks". */
  describe(): string;
  /** Name of a task given no name and an anonymous handler; must not change across restarts. */
  readonly defaultTaskName?: string;
  /** True when the source names its events (`event.name`), so that tasks may select them with `on`. */
  readonly namesEvents?: boolean;
  /** Registers routes or subscriptions; throws on a conflict. Called before anything listens. */
  attach(inbox: Inbox, runtime: SourceRuntime): void;
  /** Undoes attach (the app stopped). */
  detach(): void;
  /**
   * Rebuilds the parts of a payload the store left out (see QueuedMessage.bodyFromRaw) from
   * the raw bytes, as they were built when the event came in. Throws when it cannot.
   */
  revive?(payload: unknown, raw: Buffer): unknown;
}

export function isSource(value: unknown): value is Source {
  return typeof value === "object" && value !== null && typeof (value as Source).attach === "function" && typeof (value as Source).kind === "string";
}
