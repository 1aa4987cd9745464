/**
 * The store contract. Everything that must survive a crash (webhook inboxes, emit queues,
 * task state, dead letters) goes through these interfaces; the app, the runner and the sources
 * never know which engine sits behind them. Adding an engine adds a folder under src/store/.
 */

import type { HistoryStore, PauseStore } from "./history";

/** One unit of work waiting for a task: a webhook event or a value another task emitted. */
export interface QueuedMessage<T = unknown> {
  /** Stable id: the webhook event id, or an id derived from the emitting task's input. */
  readonly id: string;
  readonly payload: T;
  /** Exact request bytes of a webhook event, kept so signatures can be checked later. */
  readonly raw?: Buffer;
  /** Failed deliveries so far. */
  readonly attempts: number;
  /** Milliseconds since the epoch when the message entered its first queue. */
  readonly enqueuedAt: number;
  /**
   * Message of the last error thrown by the task, when there was one. In a dead letter it is
   * the error's stack (its first line is the type and message), for whoever investigates.
   */
  readonly lastError?: string;
  /**
   * True when `payload.body` can be rebuilt from `raw` by the task's source (a webhook event):
   * engines that write messages out may then leave `payload.body` out and store the body's
   * bytes once. The runner asks the source to rebuild it when a message comes back without it.
   */
  readonly bodyFromRaw?: boolean;
  /**
   * Messages of one queue with the same key are handed out one at a time, in the order they
   * entered the queue: a message is claimable only while no earlier message with its key is
   * still in the queue (waiting, claimed, or waiting for a retry).
   */
  readonly orderingKey?: string;
  /** W3C trace context (`traceparent`, `tracestate`) of the work that made this message. */
  readonly traceContext?: Readonly<Record<string, string>>;
  /**
   * The consuming task's concurrency group (TaskOptions.concurrency with a limit): "" for the
   * task as a whole, else the value of its key function. Counted by claims (see ClaimFlow).
   */
  readonly concurrencyKey?: string;
  /** The consuming task's rate-limit group (TaskOptions.rateLimit): "" for the task as a whole. */
  readonly rateKey?: string;
  /**
   * Not claimable before this time (ms since the epoch): a delayed message (`ctx.emit` with
   * `delayMs` or `runAt`). Engines keep it with the delayed retries; it is not read back.
   */
  readonly runAt?: number;
  /**
   * The consuming task's debounce or batch group (TaskOptions.debounce / batch): "" for the task
   * as a whole, else the value of its key function. Such messages are handed out by
   * `claimGroups`, never one by one.
   */
  readonly groupKey?: string;
}

/**
 * When `claimGroups` hands out a group of messages sharing a `groupKey`. Messages considered:
 * visible ones (not claimed, due), oldest first (by arrival).
 * - debounce: a key's group is due once `periodMs` passed since its newest message entered the
 *   queue, or `maxWaitMs` since its oldest did. It is handed out whole (its oldest `maxSize`
 *   when larger), and only while no other message of the key is claimed or waits for a retry
 *   (delayed, attempts above 0): one run per key at a time, a retried burst before newer events.
 * - batch: a key's group is due once it holds `maxSize` messages, or `maxWaitMs` passed since its
 *   oldest entered the queue; its oldest `maxSize` are handed out. Several groups of one key may
 *   be claimed at once.
 * Times are `QueuedMessage.enqueuedAt` against the claimer's clock.
 */
export type GroupRule =
  | { readonly kind: "debounce"; readonly periodMs: number; readonly maxWaitMs?: number; readonly maxSize: number }
  | { readonly kind: "batch"; readonly maxSize: number; readonly maxWaitMs: number };

/** What `claimGroups` handed out, and when to ask again. */
export interface ClaimedGroups {
  /** Each group: messages of one `groupKey`, oldest first. Groups in the order of their oldest message. */
  readonly groups: QueuedMessage[][];
  /** The earliest time (ms since the epoch) a group not handed out becomes due; undefined when none is waiting to become due. */
  readonly nextDueAt?: number;
  /** Messages left waiting in groups that are not due (or whose key is claimed), for status and metrics. */
  readonly collecting: number;
}

/**
 * Flow limits a claim must respect, counted by the engine across every process that shares it:
 * at most `concurrency` claimed messages per `concurrencyKey`, at most `rate.limit` claims per
 * `rate.periodMs` per `rateKey`. Only engines with `enforcesFlow` are given it.
 */
export interface ClaimFlow {
  readonly concurrency?: number;
  readonly rate?: { readonly limit: number; readonly periodMs: number };
  /** Called when messages were held back by the rate limit: the earliest time (ms since epoch) one may start. */
  readonly rateWait?: (at: number) => void;
}

/** What a queue holds right now, for status pages and metrics. */
export interface QueueStats {
  /** Messages waiting to be handed out, delayed retries included. */
  readonly waiting: number;
  /** Messages handed out to a task and not finished yet. */
  readonly inFlight: number;
  /** Milliseconds since the epoch when the oldest message still in the queue entered it; undefined when empty. */
  readonly oldestEnqueuedAt: number | undefined;
  /** Dead letters taken from this queue. */
  readonly deadLetters: number;
  /** Of `waiting`, those not yet due: retries waiting for their backoff and delayed messages. */
  readonly delayed?: number;
}

/** A message whose task kept failing, kept until someone replays or purges it. */
export interface DeadLetter<T = unknown> {
  /** Queue the message was taken from; a replay puts it back there. */
  readonly queue: string;
  readonly message: QueuedMessage<T>;
  readonly task: string;
  readonly error: string;
  readonly attempts: number;
  /** Milliseconds since the epoch. */
  readonly diedAt: number;
}

export interface StateSetOptions {
  /** Forget the value after this many milliseconds. */
  readonly ttlMs?: number;
}

/** How a store closes. */
export interface StoreCloseOptions {
  /**
   * Longest the close waits for its database; past it, what is still in flight is abandoned
   * (logged) and the close resolves. Unset: it waits for every statement's own timeout.
   */
  readonly timeoutMs?: number;
}

/** Key/value state for tasks (for example processed-markers of delivered webhooks). */
export interface StateStore {
  get<V = unknown>(key: string): Promise<V | undefined>;
  set<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<void>;
  delete(key: string): Promise<boolean>;
  /**
   * Sets the key only when it is absent (or expired) and tells whether it did; used to
   * deduplicate deliveries without a read-then-write race.
   */
  setIfAbsent<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<boolean>;
}

/**
 * State namespaces of deduplication markers begin with this: an engine may keep them apart
 * from other state (the memory store bounds their count).
 */
export const DEDUPE_NAMESPACE_PREFIX = "dedupe:";

/** Why a store refuses new work right now; the HTTP layer turns it into 503 + Retry-After. */
export interface StoreRefusal {
  readonly code: "queue_full" | "store_full" | "store_unavailable";
  readonly message: string;
  /** Seconds the sender should wait before trying again. */
  readonly retryAfterSeconds: number;
}

/** One message for one queue: a task's emitted value, or one copy of an event fanned out to several tasks. */
export interface EmitRecord {
  readonly queue: string;
  readonly message: QueuedMessage;
}

/** `complete`'s emits as a list (none, one, or one per consuming task). */
export function emitList(emit: EmitRecord | readonly EmitRecord[] | undefined): readonly EmitRecord[] {
  if (emit === undefined) return [];
  return isEmitList(emit) ? emit : [emit];
}

function isEmitList(emit: EmitRecord | readonly EmitRecord[]): emit is readonly EmitRecord[] {
  return Array.isArray(emit);
}

export interface DeadLetterStore {
  list(queue?: string): Promise<DeadLetter[]>;
  get(id: string): Promise<DeadLetter | undefined>;
  /** Moves the letter back to its queue with its attempt count reset; false when unknown. */
  replay(id: string): Promise<boolean>;
  /** Deletes one letter, or all of them (optionally of one queue); returns how many. */
  purge(filter?: { id?: string; queue?: string }): Promise<number>;
}

export interface Store {
  /** Engine name, for logs and `check` output ("memory", "embedded", ...). */
  readonly engine: string;
  /** True when an enqueued message survives a crash of this process. */
  readonly durable: boolean;
  /**
   * True when a queue write (enqueue, complete, retryLater, deadLetter) is done when the call
   * returns, its promise already settled (the memory store): there is no wait to time.
   */
  readonly writesSettleAtOnce?: boolean;
  /**
   * True when each claim is a statement sent to a database (PostgreSQL): planned, run and
   * answered over the network. Runners then claim on the next turn of the event loop, once the
   * runs of this turn have ended, so that one claim takes what several would.
   */
  readonly claimsAreStatements?: boolean;
  /**
   * Why the store cannot write right now (a directory it could not open, a failed commit), or
   * undefined. Engines that recover by themselves keep running and refuse work meanwhile.
   */
  readonly failure?: Error | undefined;

  open(): Promise<void>;
  /** Closes the store; `timeoutMs` bounds the wait for a database that does not answer (PostgreSQL). */
  close(options?: StoreCloseOptions): Promise<void>;

  /**
   * Synchronous admission check done before a request body is read, so that a full or
   * broken store answers 503 at once and nothing is half-made.
   */
  admit(queue: string): StoreRefusal | undefined;

  /**
   * Appends a message. Resolves once the message is as durable as the engine makes it
   * (committed to disk for the embedded store); rejects with StoreRefusedError when the store
   * refuses it. `internal` messages (a task's emitted value) skip the ingress limits: the input
   * that produced them is consumed in the same step.
   */
  enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void>;

  /**
   * Appends several messages, each to its queue (one event's copies, one per task it feeds):
   * all or none. Resolves once every one is as durable as the engine makes it, written in one
   * step (one journal frame or LMDB transaction, one INSERT); rejects, storing none, when the
   * store refuses any (each queue is admitted unless `internal`) or the write fails. A crash
   * never leaves some of them stored and others not.
   */
  enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void>;

  /**
   * Hands out up to `limit` visible messages of a queue. A claimed message is not handed out
   * again until it is completed, retried, dead-lettered or released, or its claimer dies
   * (for the in-process engines: the process restarts).
   */
  claim(queue: string, limit: number, flow?: ClaimFlow): Promise<QueuedMessage[]>;

  /**
   * True when claims enforce ClaimFlow themselves, across every process sharing the store
   * (PostgreSQL). Otherwise the runner enforces the limits in its process (the in-process engines).
   */
  readonly enforcesFlow?: boolean;

  /** Waiting messages a claim with `flow` would hold back now (for status and metrics); engines with `enforcesFlow`. */
  limitedCount?(queue: string, flow: ClaimFlow): Promise<number>;

  /**
   * Removes a claimed message and, in the same atomic step, appends what the task emitted: one
   * record, or one per task consuming the emit queue (all of them or, with the input, none).
   */
  complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void>;

  /**
   * Optional, for engines whose writes settle at once (`writesSettleAtOnce`): `claim` of one
   * message, returned directly (undefined when none is visible). The runner then claims and
   * starts runs in one loop, without a promise and an array per claim.
   */
  claimNow?(queue: string): QueuedMessage | undefined;

  /**
   * Optional, with `claimNow`: `complete` done before it returns; it throws what `complete`
   * would reject with. A run is then settled in the same turn as its handler, without a promise.
   * A wrapper that changes what `complete` does must change this too, or leave both out.
   */
  completeNow?(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): void;

  /**
   * Hands out up to `limit` due groups of a queue whose messages carry a `groupKey` (see
   * GroupRule), each message claimed as `claim` claims one. Engines sharing their store across
   * processes decide under one lock, so one group is handed to one process. Optional: an app
   * refuses a debounced or batched task on an engine without it.
   */
  claimGroups?(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups>;

  /**
   * Removes every claimed message of a group and, in the same atomic step, appends what the
   * task emitted for the group (as `complete` does for one message).
   */
  completeGroup?(queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]): Promise<void>;

  /** Puts a claimed message back, invisible until `visibleAt` (ms since epoch), with its new attempt count and error. */
  retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void>;

  /** Returns claimed messages to the queue untouched (shutdown of a runner that did not start them). */
  release(queue: string, ids: readonly string[]): Promise<void>;

  /** Moves a claimed message to the dead letters in one atomic step. */
  deadLetter(letter: DeadLetter): Promise<void>;

  readonly deadLetters: DeadLetterStore;

  /** The event history (see history.ts); an engine without one leaves it out and the app says so. */
  readonly history?: HistoryStore;

  /** Paused tasks, kept where the engine keeps its queues. */
  readonly pauses?: PauseStore;

  /** State scoped to a namespace (one per task, one per source for deduplication). */
  state(namespace: string): StateStore;

  /** Messages waiting or claimed in a queue. */
  depth(queue: string): Promise<number>;

  /** What a queue holds right now (status pages, metrics at scrape time). */
  stats(queue: string): Promise<QueueStats>;

  /**
   * Names of the queues holding a message (waiting, delayed, claimed or held back) or a dead
   * letter, sorted: what a tool that knows no app (`webhook-tasks status --store`) reports on.
   */
  queueNames(): Promise<string[]>;

  /**
   * Calls `listener` when messages may have become available in `queue` (after an enqueue by
   * this process, or a notification from a shared engine). Returns an unsubscribe function.
   */
  watch(queue: string, listener: () => void): () => void;
}
