import type {
  ClaimedGroups,
  DeadLetter,
  DeadLetterStore,
  EmitRecord,
  GroupRule,
  QueuedMessage,
  QueueStats,
  StateStore,
  Store,
  StoreRefusal,
} from "../store";
import { DEDUPE_NAMESPACE_PREFIX, emitList } from "../store";
import { StoreRefusedError } from "../store-errors";
import { DEFAULT_MEMORY_LIMITS, type StoreLimits } from "../store-limits";
import { Fifo } from "../fifo";
import { MemoryState, sweepExpired, type StateEntry } from "./memory-state";
import { QueueWatchers } from "../queue-watchers";
import { DEFAULT_MEMORY_HISTORY_BYTES, DEFAULT_MEMORY_HISTORY_EVENTS, MemoryHistory } from "./memory-history";
import { MemoryPauses } from "./memory-pauses";
import { ClaimedMessages } from "./claimed-messages";
import { GroupIndex } from "../group-index";
import { MemoryDeadLetters } from "./memory-dead-letters";
import { DEFAULT_MEMORY_DEDUPE_MARKERS, MarkerBound } from "./memory-markers";
import { silentLogger, type Logger } from "../../util/logger";

export interface MemoryStoreOptions {
  /** Most events its history keeps (default 10,000): the oldest go first. */
  readonly historyMaxEvents?: number;
  /** Most bytes of events its history keeps (default 64 MiB: raw bodies, payloads, runs' errors): the oldest go first. */
  readonly historyMaxBytes?: number;
  /** Most deduplication markers it keeps (default 100,000, under 50 MiB): past it the oldest are forgotten, with a warning. */
  readonly maxDedupeMarkers?: number;
  /** Where it warns of a bound reached (dead letters that fill it, markers forgotten); silent unless given. */
  readonly logger?: Logger;
}

interface MemoryQueue {
  ready: Fifo<QueuedMessage>;
  delayed: Array<{ visibleAt: number; message: QueuedMessage }>;
  /** The earliest `visibleAt` in `delayed` (Infinity when empty): a claim looks at them only from then on. */
  nextDue: number;
  claimed: ClaimedMessages;
  /**
   * Ordering keys with a message in the queue (ready, delayed or claimed: the key's head), each
   * with the later messages of that key, held back in arrival order until the head leaves.
   */
  lines: Map<string, Fifo<QueuedMessage> | null>;
  /** Messages held back in `lines`. */
  held: number;
  /** The messages of a debounced or batched task (with a group key), waiting and claimed, by key: never in `ready` or `delayed`. */
  groups: GroupIndex<QueuedMessage> | undefined;
  /** Dead letters taken from this queue: they hold the heap as its messages do, so they count against `maxQueued`. */
  dead: number;
}

/**
 * Everything in process memory: fastest, and lost when the process ends. For tests and for
 * users who say so (`store: "memory"`).
 */
export class MemoryStore implements Store {
  readonly engine = "memory";
  readonly durable = false;
  readonly writesSettleAtOnce = true;
  readonly deadLetters: DeadLetterStore;
  readonly history: MemoryHistory;
  readonly pauses = new MemoryPauses();

  private readonly queues = new Map<string, MemoryQueue>();
  /** The same as `deadLetters`, with what only the store may do (add one, read its counts). */
  private readonly dead: MemoryDeadLetters;
  private readonly stateEntries = new Map<string, StateEntry>();
  /** Deduplication markers, apart from other state: only they are bounded (see MarkerBound). */
  private readonly markers = new Map<string, StateEntry>();
  private readonly markerBound: MarkerBound;
  private readonly watchers = new QueueWatchers();
  private readonly limits: StoreLimits;
  /** `maxBytes`, which on this store bounds its dead letters' bytes (Infinity when unset). */
  private readonly maxDeadBytes: number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(limits: Partial<StoreLimits> = {}, options: MemoryStoreOptions = {}) {
    this.limits = { ...DEFAULT_MEMORY_LIMITS, ...limits };
    this.maxDeadBytes = this.limits.maxBytes ?? Infinity;
    const maxMarkers = options.maxDedupeMarkers ?? DEFAULT_MEMORY_DEDUPE_MARKERS;
    if (!Number.isInteger(maxMarkers) || maxMarkers < 1) throw new TypeError(`MemoryStore: maxDedupeMarkers must be an integer >= 1 (got ${String(maxMarkers)})`);
    const logger = options.logger ?? silentLogger;
    this.markerBound = new MarkerBound(this.markers, maxMarkers, logger);
    this.history = new MemoryHistory(options.historyMaxEvents ?? DEFAULT_MEMORY_HISTORY_EVENTS, options.historyMaxBytes ?? DEFAULT_MEMORY_HISTORY_BYTES);
    this.deadLetters = this.dead = new MemoryDeadLetters({
      counter: (queue) => this.queue(queue),
      requeue: (queue, message) => {
        arrive(this.queue(queue), message);
        this.notify(queue);
      },
    }, logger);
  }

  async open(): Promise<void> {
    this.sweeper = setInterval(() => {
      sweepExpired(this.stateEntries);
      sweepExpired(this.markers);
    }, 60_000);
    this.sweeper.unref();
  }

  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Dead letters hold the heap and are never dropped: they count against the limits until replayed or purged. */
  admit(queue: string): StoreRefusal | undefined {
    if (this.dead.bytes >= this.maxDeadBytes) return this.dead.storeFull(this.maxDeadBytes);
    const q = this.queues.get(queue);
    if (q && size(q) + q.dead >= this.limits.maxQueued) {
      // Dead letters are named as the cause only when the messages alone would leave room.
      if (q.dead > 0 && size(q) < this.limits.maxQueued) return this.dead.queueFull(queue, q.dead, this.limits.maxQueued);
      return { code: "queue_full", message: `queue "${queue}" holds ${this.limits.maxQueued} messages`, retryAfterSeconds: 1 };
    }
    return undefined;
  }

  // enqueue, claim and complete are the hot path: plain functions returning settled promises,
  // without the extra promise and microtask turns an async function adds to each call.

  enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }): Promise<void> {
    if (!options?.internal) {
      const refusal = this.admit(queue);
      if (refusal) return Promise.reject(new StoreRefusedError(refusal));
    }
    if (arrive(this.queue(queue), message)) this.notify(queue);
    return DONE;
  }

  /** All or none: every queue is admitted before any copy arrives (nothing here can fail half-way). */
  enqueueAll(copies: readonly EmitRecord[], options?: { internal?: boolean }): Promise<void> {
    if (!options?.internal) {
      for (const { queue } of copies) {
        const refusal = this.admit(queue);
        if (refusal) return Promise.reject(new StoreRefusedError(refusal));
      }
    }
    for (const { queue, message } of copies) if (arrive(this.queue(queue), message)) this.notify(queue);
    return DONE;
  }

  claim(queue: string, limit: number): Promise<QueuedMessage[]> {
    const q = this.queues.get(queue);
    const out: QueuedMessage[] = [];
    if (q === undefined) return Promise.resolve(out);
    promoteIfDue(q);
    while (out.length < limit) {
      const message = take(q);
      if (message === undefined) break;
      out.push(message);
    }
    return Promise.resolve(out);
  }

  claimNow(queue: string): QueuedMessage | undefined {
    const q = this.queues.get(queue);
    if (q === undefined) return undefined;
    promoteIfDue(q);
    return take(q);
  }

  claimGroups(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> {
    const q = this.queues.get(queue);
    if (q === undefined) return Promise.resolve({ groups: [], collecting: 0 });
    promoteIfDue(q);
    const index = groupIndex(q);
    // Messages without a group key (queued before the task was grouped) are the task's group "".
    for (let message = q.ready.shift(); message !== undefined; message = q.ready.shift()) index.add(groupItem(message));
    const picked = index.claim(rule, limit, Date.now());
    const groups = picked.groups.map((group) => group.map(({ ref }) => ref));
    for (const group of groups) for (const message of group) q.claimed.add(message);
    return Promise.resolve({ ...picked, groups });
  }

  /** One step, as everything here: the group's messages leave and its emits arrive together. */
  completeGroup(queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    for (const id of ids) this.finish(queue, id);
    for (const record of emitList(emit)) this.arriveInternal(record);
    // The key's next group (a debounce waits for its run to end) may be claimed now.
    this.notify(queue);
    return DONE;
  }

  complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    this.completeNow(queue, id, emit);
    return DONE;
  }

  completeNow(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): void {
    this.finish(queue, id);
    if (emit === undefined) return;
    // Internal: the input that made them is consumed in the same step, so no ingress limit applies.
    if (!Array.isArray(emit)) return this.arriveInternal(emit as EmitRecord);
    for (const record of emit as readonly EmitRecord[]) this.arriveInternal(record);
  }

  private arriveInternal(record: EmitRecord): void {
    if (arrive(this.queue(record.queue), record.message)) this.notify(record.queue);
  }

  async retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    const q = this.queue(queue);
    q.claimed.delete(message.id);
    if (q.groups?.retry(message.id, message, visibleAt)) return;
    q.delayed.push({ visibleAt, message });
    if (visibleAt < q.nextDue) q.nextDue = visibleAt;
  }

  async release(queue: string, ids: readonly string[]): Promise<void> {
    const q = this.queues.get(queue);
    if (!q) return;
    for (let i = ids.length - 1; i >= 0; i--) {
      const message = q.claimed.get(ids[i]);
      if (!message) continue;
      q.claimed.delete(ids[i]);
      if (!q.groups?.release(ids[i])) q.ready.unshift(message);
    }
    this.notify(queue);
  }

  async deadLetter(letter: DeadLetter): Promise<void> {
    this.finish(letter.queue, letter.message.id);
    this.dead.add(letter);
  }

  /** A claimed message leaves the queue; the next message of its key, if any, becomes claimable. */
  private finish(queue: string, id: string): void {
    const q = this.queues.get(queue);
    const message = q?.claimed.get(id);
    if (!q || !message) return;
    q.claimed.delete(id);
    q.groups?.settle(id);
    if (message.orderingKey !== undefined && leave(q, message.orderingKey)) this.notify(queue);
  }

  state(namespace: string): StateStore {
    if (namespace.startsWith(DEDUPE_NAMESPACE_PREFIX)) return new MemoryState(this.markers, `${namespace}\u0000`, this.markerBound);
    return new MemoryState(this.stateEntries, `${namespace}\u0000`);
  }

  async depth(queue: string): Promise<number> {
    const q = this.queues.get(queue);
    return q ? size(q) : 0;
  }

  async stats(queue: string): Promise<QueueStats> {
    const q = this.queues.get(queue);
    const deadLetters = q?.dead ?? 0;
    if (!q) return { waiting: 0, inFlight: 0, oldestEnqueuedAt: undefined, deadLetters, delayed: 0 };
    let oldest = Infinity;
    for (const m of q.ready) oldest = Math.min(oldest, m.enqueuedAt);
    for (const { message } of q.delayed) oldest = Math.min(oldest, message.enqueuedAt);
    for (const m of q.claimed.values()) oldest = Math.min(oldest, m.enqueuedAt);
    oldest = Math.min(oldest, q.groups?.oldestEnqueuedAt() ?? Infinity);
    const now = Date.now();
    let delayed = q.groups?.delayedAfter(now) ?? 0;
    for (const { visibleAt } of q.delayed) if (visibleAt > now) delayed++;
    const grouped = q.groups === undefined ? 0 : q.groups.visible + q.groups.delayedCount;
    return { waiting: q.ready.length + q.delayed.length + grouped, inFlight: q.claimed.size, oldestEnqueuedAt: oldest === Infinity ? undefined : oldest, deadLetters, delayed };
  }

  async queueNames(): Promise<string[]> {
    const names = new Set<string>();
    for (const [name, q] of this.queues) if (size(q) > 0 || q.dead > 0) names.add(name);
    return [...names].sort();
  }

  watch(queue: string, listener: () => void): () => void {
    return this.watchers.watch(queue, listener);
  }

  private queue(name: string): MemoryQueue {
    let q = this.queues.get(name);
    if (!q) this.queues.set(name, (q = { ready: new Fifo(), delayed: [], nextDue: Infinity, claimed: new ClaimedMessages(), lines: new Map(), held: 0, groups: undefined, dead: 0 }));
    return q;
  }

  private notify(queue: string): void {
    this.watchers.notify(queue);
  }
}

/** The settled promise every successful write returns. */
const DONE: Promise<void> = Promise.resolve();

function size(q: MemoryQueue): number {
  // Claimed grouped messages are in `claimed` too.
  const grouped = q.groups === undefined ? 0 : q.groups.visible + q.groups.delayedCount;
  return q.ready.length + q.delayed.length + q.claimed.size + q.held + grouped;
}

function groupIndex(q: MemoryQueue): GroupIndex<QueuedMessage> {
  return (q.groups ??= new GroupIndex());
}

function groupItem(message: QueuedMessage): { id: string; enqueuedAt: number; groupKey: string; ref: QueuedMessage } {
  return { id: message.id, enqueuedAt: message.enqueuedAt, groupKey: message.groupKey ?? "", ref: message };
}

/**
 * A message enters the queue: claimable at once, unless an earlier message of its ordering key
 * is still in the queue; it then waits behind it. Returns whether it is claimable.
 */
function arrive(q: MemoryQueue, message: QueuedMessage): boolean {
  if (message.groupKey !== undefined) {
    const now = Date.now();
    groupIndex(q).add(groupItem(message), message.runAt ?? 0, now);
    return message.runAt === undefined || message.runAt <= now;
  }
  // A delayed message (ctx.emit with a delay) waits with the retries; it has no ordering key.
  if (message.runAt !== undefined && message.runAt > Date.now()) {
    q.delayed.push({ visibleAt: message.runAt, message });
    if (message.runAt < q.nextDue) q.nextDue = message.runAt;
    return false;
  }
  const key = message.orderingKey;
  if (key !== undefined) {
    if (q.lines.has(key)) {
      let line = q.lines.get(key);
      if (!line) q.lines.set(key, (line = new Fifo()));
      line.push(message);
      q.held++;
      return false;
    }
    q.lines.set(key, null);
  }
  q.ready.push(message);
  return true;
}

/** The head of a key left the queue (done or dead): its next message becomes claimable. Returns whether there was one. */
function leave(q: MemoryQueue, key: string): boolean {
  const next = q.lines.get(key)?.shift();
  if (next === undefined) {
    q.lines.delete(key);
    return false;
  }
  q.held--;
  q.ready.push(next);
  return true;
}

/** The next claimable message, now claimed. */
function take(q: MemoryQueue): QueuedMessage | undefined {
  const message = q.ready.shift();
  if (message !== undefined) q.claimed.add(message);
  return message;
}

/** Delayed retries whose time has come become claimable; the clock is read only while some wait. */
function promoteIfDue(q: MemoryQueue): void {
  if (q.delayed.length === 0) return;
  const now = Date.now();
  if (now >= q.nextDue) promoteDue(q, now);
}

function promoteDue(q: MemoryQueue, now: number): void {
  if (q.delayed.length === 0) return;
  const keep: MemoryQueue["delayed"] = [];
  let nextDue = Infinity;
  for (const entry of q.delayed) {
    if (entry.visibleAt <= now) q.ready.push(entry.message);
    else {
      keep.push(entry);
      if (entry.visibleAt < nextDue) nextDue = entry.visibleAt;
    }
  }
  q.delayed = keep;
  q.nextDue = nextDue;
}
