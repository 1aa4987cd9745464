import type { EmitRecord, QueuedMessage, QueueStats } from "../store";
import { StoreRefusedError, toRefusal } from "../store-errors";
import type { QueueWatchers } from "../queue-watchers";
import type { DiskRoom } from "./disk-room";
import { laneClaimer, type ClaimBook, type OpenedJournal } from "./journal-handoff";
import { placeKeyed } from "./key-lines";
import { dueRange, laterRange, readyRange, type DelayedKey, type Location, type ReadyKey } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import { embeddedQueueStats } from "./queue-stats";
import type { PeekedQueue } from "./journal/peek-journal";
import type { QueueTracker } from "./queue-tracker";
import type { GroupItem } from "../group-index";
import { messageRecord } from "./records";
import { heldBytes, heldForm } from "./held-message";
import { checkStorable } from "../payload-codec";
import type { StoreWriter } from "./store-writer";

/** Where the store is at work: the B-tree environment and, for a consumer, the journal. */
export interface Opened {
  readonly dbs: EmbeddedDbs;
  readonly writer: StoreWriter;
  readonly tag: string;
  readonly journal: OpenedJournal | undefined;
  /** Not the consumer: what the journal held at open, per queue (read, not taken). */
  readonly peeked?: ReadonlyMap<string, PeekedQueue>;
}

/** What the queue operations need from their store; `use` throws (StoreRefusedError) while it is not open. */
export interface QueueHost {
  use(): Opened;
  opened(): Opened | undefined;
  readonly tracker: QueueTracker;
  readonly watchers: QueueWatchers;
  readonly room: DiskRoom;
  /** Committed into a deleted file is not committed: throws so that it is never acknowledged. */
  refuseIfDataFileLost(): void;
}

/** Messages, and their bytes in memory, kept between their commit and their claim (beyond either, claims read disk). */
const HANDOFF_LIMIT = 10_000;
const HANDOFF_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The embedded store's queue operations, on an open store: enqueue, claim, release, replay,
 * and the claims and counts they keep in the tracker. The journal's lane is reached through
 * journal-handoff.ts; what becomes of a claimed message is settle-operations.ts. Admission and
 * the store's lifecycle stay with EmbeddedStore.
 */
export class QueueOperations implements ClaimBook {
  readonly tracker: QueueTracker;
  /**
   * Messages this process committed and nobody claimed yet, by queue and sequence: a claim
   * takes them from here instead of reading and decoding them back from disk. Bounded; after a
   * restart (or past the bound) claims read the disk as usual.
   */
  private readonly handoff = new Map<string, Map<number, { readonly message: QueuedMessage; readonly bytes: number }>>();
  private handoffSize = 0;
  private handoffBytes = 0;

  constructor(private readonly host: QueueHost) {
    this.tracker = host.tracker;
  }

  /** Enqueues a message the store admitted (or an internal one). */
  async enqueue(queue: string, message: QueuedMessage): Promise<void> {
    const { dbs, writer, tag, journal } = this.host.use();
    const seq = this.tracker.allocate(queue);
    // Counted before the commit so that admit sees requests still in flight.
    this.tracker.adjust(queue, 1);
    if (message.orderingKey !== undefined) return this.enqueueKeyed(dbs, writer, [queue, seq, tag], message);
    // A disk low on room keeps it for done-markers: new messages go to the B-tree's free pages.
    const memory = journal === undefined ? 0 : journal.lane.memoryOf(message);
    // A debounced or batched task's messages stay in the B-tree, where its group claims look.
    if (message.groupKey === undefined && journal?.lane.hasRoomFor(1, memory) && !this.host.room.diskLow()) {
      try {
        await journal.lane.enqueue(queue, seq, message, memory);
      } catch (error) {
        this.tracker.adjust(queue, -1);
        throw asRefusal(error);
      }
      return this.notify(queue);
    }
    try {
      await writer.run(() => dbs.ready.put([queue, seq, tag], messageRecord(message)));
    } catch (error) {
      this.tracker.adjust(queue, -1);
      throw asRefusal(error);
    }
    this.host.refuseIfDataFileLost();
    this.inserted(queue, seq, message);
  }

  /**
   * Enqueues an event's copies (admitted, or internal) in one write: one journal frame, or one
   * B-tree transaction when a copy has an ordering key or the journal is full. All or none.
   */
  async enqueueAll(copies: readonly EmitRecord[]): Promise<void> {
    if (copies.length === 1) return this.enqueue(copies[0].queue, copies[0].message);
    const { dbs, writer, tag, journal } = this.host.use();
    const items = copies.map(({ queue, message }) => ({ queue, seq: this.tracker.allocate(queue), message, claimable: true, memory: journal === undefined ? 0 : journal.lane.memoryOf(message) }));
    // Counted before the commit so that admit sees requests still in flight.
    for (const item of items) this.tracker.adjust(item.queue, 1);
    const uncount = (): void => {
      for (const item of items) this.tracker.adjust(item.queue, -1);
    };
    const keyed = items.some((item) => item.message.orderingKey !== undefined || item.message.groupKey !== undefined);
    if (!keyed && journal?.lane.hasRoomFor(items.length, items.reduce((sum, item) => sum + item.memory, 0)) && !this.host.room.diskLow()) {
      try {
        await journal.lane.enqueueAll(items);
      } catch (error) {
        uncount();
        throw asRefusal(error);
      }
      for (const item of items) this.notify(item.queue);
      return;
    }
    try {
      // Checked before the transaction: lmdb keeps the puts made before a throw inside one.
      for (const item of items) checkStorable(item.message.payload, "payload");
      await writer.run(() =>
        dbs.ready.transaction(() => {
          for (const item of items) {
            const at: ReadyKey = [item.queue, item.seq, tag];
            if (item.message.orderingKey !== undefined) item.claimable = placeKeyed(dbs, at, item.message, (seq) => this.seqAbove(item.queue, seq));
            else void dbs.ready.put(at, messageRecord(item.message));
          }
        }),
      );
    } catch (error) {
      uncount();
      throw asRefusal(error);
    }
    this.host.refuseIfDataFileLost();
    for (const item of items) if (item.claimable) this.inserted(item.queue, item.seq, item.message);
  }

  /** A message with an ordering key: to `ready` as its key's head, or held back (key-lines.ts). */
  private async enqueueKeyed(dbs: EmbeddedDbs, writer: StoreWriter, at: ReadyKey, message: QueuedMessage): Promise<void> {
    const [queue, seq] = at;
    let claimable: boolean;
    try {
      claimable = await writer.run(() => dbs.ready.transaction(() => placeKeyed(dbs, at, message, (seq) => this.seqAbove(queue, seq))));
    } catch (error) {
      this.tracker.adjust(queue, -1);
      throw asRefusal(error);
    }
    this.host.refuseIfDataFileLost();
    if (claimable) this.inserted(queue, seq, message);
  }

  async claim(queue: string, limit: number): Promise<QueuedMessage[]> {
    const { dbs, journal, tag } = this.host.use();
    const out: QueuedMessage[] = [];
    if (!(limit > 0)) return out;
    const now = Date.now();
    // Retries that are due first: they have waited their backoff already.
    if (this.tracker.delayedMayBeDue(queue, now)) this.claimDue(dbs, queue, now, limit, out);
    if (out.length >= limit) return out;

    // The B-tree's waiting messages and the journal's, merged in sequence order. The B-tree is
    // read only when it may hold some: a range scan per claim is not free.
    const takeLaneBefore = laneClaimer(journal, this.tracker, queue, limit, out);
    const from = this.tracker.readyScanFrom(queue, now);
    if (from !== undefined) {
      let contiguous = true;
      let exhausted = true;
      const waiting = this.handoff.get(queue);
      for (const key of dbs.ready.getKeys(readyRange(queue, from))) {
        const seq = key[1];
        takeLaneBefore(seq);
        if (out.length >= limit) {
          exhausted = false;
          break;
        }
        // The hand-off holds this process's messages: another process's key may share a seq.
        const mine = key[2] === tag;
        const value = (mine ? waiting?.get(seq)?.message : undefined) ?? dbs.ready.get(key);
        if (value === undefined) continue; // removed since the scan began
        const held = this.tracker.claimedAt(queue, value.id);
        if (held) {
          // Claimed already (skip it); or another message with the same id is: leave this one for later.
          if (held.in === "ready" && sameKey(held.key, key)) {
            if (contiguous) this.tracker.advance(queue, seq + 1);
          } else contiguous = false;
          continue;
        }
        this.tracker.claim(queue, value.id, value.orderingKey === undefined ? { in: "ready", key } : { in: "ready", key, orderingKey: value.orderingKey });
        if (contiguous) this.tracker.advance(queue, seq + 1);
        if (mine) this.handedOff(waiting, seq);
        out.push(value);
      }
      // Every waiting message of the B-tree is claimed now: the next claims need not look.
      if (exhausted && contiguous) this.tracker.readyDrained(queue);
    }
    takeLaneBefore(Infinity);
    return out;
  }

  /** Claims due retries into `out`; notes when the next one falls due. */
  private claimDue(dbs: EmbeddedDbs, queue: string, now: number, limit: number, out: QueuedMessage[]): void {
    for (const { key, value } of dbs.delayed.getRange(dueRange(queue, now))) {
      if (out.length >= limit) return;
      if (this.tracker.claimedAt(queue, value.id)) continue;
      this.tracker.claim(queue, value.id, value.orderingKey === undefined ? { in: "delayed", key } : { in: "delayed", key, orderingKey: value.orderingKey });
      out.push(value);
    }
    let next = Infinity;
    for (const key of dbs.delayed.getKeys(laterRange(queue, now))) next = key[1];
    this.tracker.delayedScanned(queue, next);
  }

  /** Forgets the claim of a finished message and counts it out of its queue. */
  finished(queue: string, id: string): void {
    if (this.tracker.unclaim(queue, id)) this.tracker.adjust(queue, -1);
  }

  async release(queue: string, ids: readonly string[]): Promise<void> {
    let any = false;
    for (const id of ids) {
      const location = this.tracker.unclaim(queue, id, true);
      this.unclaimed(queue, location);
      any ||= location !== undefined;
    }
    if (any) this.notify(queue);
  }

  async depth(queue: string): Promise<number> {
    this.host.use();
    return this.tracker.count(queue);
  }

  async stats(queue: string): Promise<QueueStats> {
    const { dbs, journal, peeked } = this.host.use();
    return embeddedQueueStats(dbs, this.tracker, journal?.lane, queue, peeked?.get(queue)?.oldestEnqueuedAt);
  }

  /** Queues the tracker counts messages in (the disk's at open, this process's since), and those with dead letters. */
  async queueNames(): Promise<string[]> {
    const { dbs } = this.host.use();
    const names = new Set(this.tracker.queuesHeld());
    for (const { value } of dbs.dead.getRange()) names.add(value.queue);
    return [...names].sort();
  }

  requeue(queue: string, message: QueuedMessage): () => void {
    const { dbs, tag } = this.host.use();
    const seq = this.tracker.allocate(queue);
    const record = messageRecord(message);
    // A replay is a new arrival: at the end of the queue, and of its key's line.
    let claimable = true;
    if (message.orderingKey !== undefined) claimable = placeKeyed(dbs, [queue, seq, tag], message, (above) => this.seqAbove(queue, above));
    else void dbs.ready.put([queue, seq, tag], record);
    return () => {
      this.tracker.deadLetterDelta--;
      this.tracker.adjust(queue, 1);
      if (claimable) this.inserted(queue, seq, record);
    };
  }

  /** A sequence number of `queue` past `seq` (and past every one this process gave out). */
  seqAbove(queue: string, seq: number): number {
    this.tracker.recovered(queue, seq, 0);
    return this.tracker.allocate(queue);
  }

  /** Forgets the hand-off (at close, and at open: the tracker starts over). */
  clearHandoff(): void {
    this.handoff.clear();
    this.handoffSize = 0;
    this.handoffBytes = 0;
  }

  /** A committed message at `seq` is now visible: claims must look there, listeners may claim it. */
  inserted(queue: string, seq: number, message: QueuedMessage): void {
    const room = HANDOFF_MAX_BYTES - this.handoffBytes;
    // Group claims read the disk (group-operations.ts): a grouped message is not kept for a hand-off.
    const bytes = this.handoffSize < HANDOFF_LIMIT && room > 0 && message.groupKey === undefined ? heldBytes(message, room) : Infinity;
    if (bytes <= room) {
      let waiting = this.handoff.get(queue);
      if (!waiting) this.handoff.set(queue, (waiting = new Map()));
      waiting.set(seq, { message: heldForm(message), bytes });
      this.handoffSize++;
      this.handoffBytes += bytes;
    }
    this.tracker.rewind(queue, seq);
    // A grouped queue's index learns of the arrival (before its first group claim, that claim reads the disk).
    const tag = this.host.opened()?.tag;
    if (tag !== undefined) this.tracker.groupIndex(queue)?.add(groupItem(message, { in: "ready", key: [queue, seq, tag] }));
    this.notify(queue);
  }

  /** A committed message waits in `delayed` until its time: claims look there from then on, and a grouped queue's index holds it. */
  delayedInserted(queue: string, key: DelayedKey, message: QueuedMessage): void {
    this.tracker.delayedDueAt(queue, key[1]);
    this.tracker.groupIndex(queue)?.add(groupItem(message, { in: "delayed", key }), key[1]);
  }

  /** Messages and bytes the hand-off holds (for tests and the docs' memory figures). */
  get handoffHeld(): { readonly messages: number; readonly bytes: number } {
    return { messages: this.handoffSize, bytes: this.handoffBytes };
  }

  private handedOff(waiting: Map<number, { readonly bytes: number }> | undefined, seq: number): void {
    const entry = waiting?.get(seq);
    if (entry === undefined) return;
    waiting!.delete(seq);
    this.handoffSize--;
    this.handoffBytes -= entry.bytes;
  }

  /** A write about a claimed message failed: hand the message out again later rather than lose it. */
  abandon(queue: string, id: string): void {
    const location = this.tracker.unclaim(queue, id, true);
    this.unclaimed(queue, location);
    if (location) this.notify(queue);
  }

  /** A message that was claimed is claimable again where it is. */
  private unclaimed(queue: string, location: Location | undefined): void {
    if (location?.in === "ready") this.tracker.rewind(queue, location.key[1]);
    else if (location?.in === "delayed") this.tracker.delayedDueAt(queue, location.key[1]);
    else if (location?.in === "journal") this.host.opened()?.journal?.lane.release(location.entryId);
  }

  notify(queue: string): void {
    this.host.watchers.notify(queue);
  }
}

/** A message as a group index holds it: what decides its group and where it is on disk. */
export function groupItem(message: QueuedMessage, ref: Location): GroupItem<Location> {
  return { id: message.id, enqueuedAt: message.enqueuedAt, groupKey: message.groupKey ?? "", ref };
}

function asRefusal(error: unknown): StoreRefusedError {
  return error instanceof StoreRefusedError ? error : new StoreRefusedError(toRefusal(error), { cause: error });
}

function sameKey(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((part, i) => part === b[i]);
}
