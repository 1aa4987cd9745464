import type { Logger } from "../util/logger";
import type { ListenerRegistry } from "../http/listener-registry";
import type { TrustProxy } from "../http/trust-proxy";
import type { EmitRecord, QueuedMessage, StateStore, StoreRefusal } from "../store/store";
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

/** An event routed to the tasks that take it: one copy each (none: no task takes it). */
export interface RoutedEvent {
  readonly id: string;
  readonly copies: readonly EmitRecord[];
}

/**
 * The door a source pushes events through: one per source, for every task it feeds. It hides
 * the store and the runners, so a source knows nothing of either.
 */
export interface Inbox {
  /** The source's label in logs and metrics. */
  readonly name: string;
  /** The tasks the source feeds, in the order they were added (at least one). */
  readonly tasks: readonly string[];
  /** State namespace of the source's deduplication markers. */
  readonly dedupeNamespace: string;
  /**
   * Namespaces of markers written before the source's tasks changed, read (never written) when
   * `dedupeNamespace` has no marker: a repeat of a delivery taken before the deploy stays a duplicate.
   */
  readonly dedupeEarlier?: readonly string[];
  /** Synchronous check done before reading a request: a refusal means 503 and no event. */
  admit(): StoreRefusal | undefined;
  /**
   * Decides which tasks take the event (their filters) and makes their copies (their ordering
   * keys). Throws FilterError or OrderingKeyError, storing nothing.
   */
  route(message: QueuedMessage): RoutedEvent;
  /** Stores the event's copies, all or none; resolves once they are as durable as the app's store makes them. */
  accept(routed: RoutedEvent): Promise<void>;
  /**
   * An event no task takes, answered without storing it: noted in the event history (when the
   * app keeps one) as unrouted, in the background, for a replay once a task takes such events.
   * Never throws; optional for inboxes that keep no history.
   */
  unrouted?(message: QueuedMessage): void;
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
 * A push source: something outside the app that produces events for the tasks subscribed to
 * it. Queue sources are plain strings and need no object. New kinds of source implement this interface.
 */
export interface Source {
  readonly kind: string;
  /** Human description for errors and logs, e.g. "WebhookSource POST 127.0.0.1:8080/hooks". */
  describe(): string;
  /** Name of a task given no name and an anonymous handler; must not change across restarts. */
  readonly defaultTaskName?: string;
  /** Stable label of the source in logs, metrics and state (a webhook's path without its "/"). */
  readonly sourceName?: string;
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
