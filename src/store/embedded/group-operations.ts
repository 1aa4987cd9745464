import { emitList, type ClaimedGroups, type EmitRecord, type GroupRule, type QueuedMessage } from "../store";
import { StoreRefusedError } from "../store-errors";
import { checkStorable } from "../payload-codec";
import type { GroupIndex } from "../group-index";
import { leftJournal } from "./journal-handoff";
import { placeKeyed } from "./key-lines";
import { queueDelayedRange, readyRange, type Location, type ReadyKey } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import { groupItem, type Opened, type QueueOperations } from "./queue-operations";
import { messageRecord } from "./records";
import { delayedAt, removeAt } from "./settle-operations";

/** What group claims need from their store; `use` throws (StoreRefusedError) while it is not open. */
export interface GroupHost {
  use(): Opened;
  opened(): Opened | undefined;
}

/**
 * The embedded store's debounce and batch claims. A grouped message never enters the journal
 * (queue-operations.ts sends it to the B-tree). The queue's group index (group-index.ts, kept by
 * the tracker) says which groups are due; a claim reads from disk only the messages it hands
 * out. The index is built by the queue's first group claim of an opening, from one read of the
 * queue's messages (claims are not stored: what was claimed before a restart waits again), and
 * kept up to date by this process's arrivals, retries, releases and settlements. Another process
 * adds messages only by replaying dead letters (the CLI): when the dead letters are fewer than
 * this process expects, a claim walks the queue's keys for the ones it does not know. One process
 * consumes the directory (consumer-lock.ts): its claims need no lock of their own. What is
 * claimed here is settled by `completeGroup`, or one by one by retryLater, deadLetter and
 * release, as single claims are.
 */
export class GroupOperations {
  /** Messages group claims read from disk (tests check that a claim does not read the backlog). */
  messagesRead = 0;
  /** The dead letters' count at the last group claim (lmdb keeps it: reading it costs no walk). */
  private deadSeen: number | undefined;
  private readonly tags = new Map<string, string>();

  constructor(
    private readonly host: GroupHost,
    private readonly ops: QueueOperations,
  ) {}

  async claimGroups(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> {
    const { dbs } = this.host.use();
    const { tracker } = this.ops;
    const now = Date.now();
    const dead = deadLetterCount(dbs);
    const replayedElsewhere = this.deadSeen !== undefined && dead < this.deadSeen + tracker.deadLetterDelta;
    this.deadSeen = dead;
    tracker.deadLetterDelta = 0;
    let index = tracker.groupIndex(queue);
    if (index === undefined) index = this.build(dbs, queue, now);
    else if (replayedElsewhere) this.addForeign(dbs, queue, index, now);
    const picked = index.claim(rule, limit, now);
    const groups: QueuedMessage[][] = [];
    for (const group of picked.groups) {
      const messages: QueuedMessage[] = [];
      for (const { id, groupKey, ref } of group) {
        const message = ref.in === "ready" ? dbs.ready.get(ref.key) : ref.in === "delayed" ? dbs.delayed.get(ref.key) : undefined;
        this.messagesRead++;
        // Gone from the disk, or claimed one by one (a plain claim of this queue): not the index's to hand out.
        if (message === undefined || tracker.claimedAt(queue, id) !== undefined) {
          index.settle(id);
          continue;
        }
        tracker.claim(queue, id, ref.in === "journal" ? ref : { ...ref, groupKey });
        messages.push(message);
      }
      if (messages.length > 0) groups.push(messages);
    }
    const { collecting, nextDueAt } = picked;
    return nextDueAt === undefined ? { groups, collecting } : { groups, nextDueAt, collecting };
  }

  /** The queue's index, from its messages on disk: waiting ones and retries (claimed ones, if any, were claimed one by one). */
  private build(dbs: EmbeddedDbs, queue: string, now: number): GroupIndex<Location> {
    const { tracker } = this.ops;
    const index = tracker.newGroupIndex(queue);
    for (const { key, value } of dbs.ready.getRange(readyRange(queue, 0))) {
      this.messagesRead++;
      if (!tracker.claimedAt(queue, value.id)) index.add(groupItem(value, { in: "ready", key: this.shared(queue, key as ReadyKey) }), 0, now);
    }
    for (const { key, value } of dbs.delayed.getRange(queueDelayedRange(queue))) {
      this.messagesRead++;
      // A delayed message that failed before waits for its retry (attempts counted); one sent with a delay does not.
      if (!tracker.claimedAt(queue, value.id)) index.add(groupItem(value, { in: "delayed", key }), key[1], now, value.attempts > 0);
    }
    return index;
  }

  /** The key with the queue's name and its writer tag shared by every message (each decoded key has its own copies). */
  private shared(queue: string, [, seq, writer]: ReadyKey): ReadyKey {
    let tag = this.tags.get(writer);
    if (tag === undefined) this.tags.set(writer, (tag = writer));
    return [queue, seq, tag];
  }

  /** Messages another process put in the queue: its keys are walked, only the unknown ones read. */
  private addForeign(dbs: EmbeddedDbs, queue: string, index: GroupIndex<Location>, now: number): void {
    const { tracker } = this.ops;
    const tag = this.host.opened()?.tag;
    for (const key of dbs.ready.getKeys(readyRange(queue, 0))) {
      // This process's own messages are known from their arrival.
      if ((key as ReadyKey)[2] === tag) continue;
      const location: Location = { in: "ready", key: this.shared(queue, key as ReadyKey) };
      if (index.knows(location)) continue;
      const value = dbs.ready.get(key);
      this.messagesRead++;
      if (value !== undefined && !tracker.claimedAt(queue, value.id)) index.add(groupItem(value, location), 0, now);
    }
  }

  /** The group's messages leave and what its run emitted arrives, in one transaction. */
  async completeGroup(queue: string, ids: readonly string[], emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    const { tracker } = this.ops;
    const from = ids.map((id) => tracker.claimedAt(queue, id));
    const emits = emitList(emit);
    if (from.every((f) => f === undefined) && emits.length === 0) return;
    const { dbs, writer, tag } = this.host.use();
    const emitted = emits.map((e) => ({ ...e, key: [e.queue, tracker.allocate(e.queue), tag] as ReadyKey, claimable: e.message.runAt === undefined }));
    for (const e of emitted) tracker.adjust(e.queue, 1);
    try {
      // Checked before the write: lmdb keeps the puts made before a throw inside a transaction.
      for (const e of emitted) checkStorable(e.message.payload, "payload");
      await writer.run(() =>
        dbs.ready.transaction(() => {
          for (const location of from) void removeAt(dbs, location);
          for (const e of emitted) {
            if (e.message.runAt !== undefined) void dbs.delayed.put(delayedAt(e.key, e.message.runAt), messageRecord(e.message));
            else if (e.message.orderingKey !== undefined) e.claimable = placeKeyed(dbs, e.key, e.message, (seq) => this.ops.seqAbove(e.queue, seq));
            else void dbs.ready.put(e.key, messageRecord(e.message));
          }
        }),
      );
    } catch (error) {
      for (const e of emitted) tracker.adjust(e.queue, -1);
      // A commit that failed gives the group back; a value that cannot be encoded leaves it claimed, for the caller to retry or dead-letter.
      if (error instanceof StoreRefusedError) for (const id of ids) this.ops.abandon(queue, id);
      throw error;
    }
    const lane = this.host.opened()?.journal?.lane;
    for (let i = 0; i < ids.length; i++) {
      await leftJournal(lane, from[i]);
      if (from[i] && tracker.unclaim(queue, ids[i])) tracker.adjust(queue, -1);
    }
    for (const e of emitted) {
      if (e.claimable) this.ops.inserted(e.queue, e.key[1], e.message);
      else if (e.message.runAt !== undefined) this.ops.delayedInserted(e.queue, delayedAt(e.key, e.message.runAt), e.message);
    }
    // The key's next burst (a debounce waits for its run to end) may be claimed now.
    this.ops.notify(queue);
  }
}

/** How many dead letters the store holds, as lmdb counts them (NaN if it does not say: no walk is then made). */
function deadLetterCount(dbs: EmbeddedDbs): number {
  const { entryCount } = dbs.dead.getStats() as { entryCount?: unknown };
  return typeof entryCount === "number" ? entryCount : NaN;
}
