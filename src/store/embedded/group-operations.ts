import { emitList, type ClaimedGroups, type EmitRecord, type GroupRule, type QueuedMessage } from "../store";
import { StoreRefusedError } from "../store-errors";
import { checkStorable } from "../payload-codec";
import { pickGroups } from "../group-pick";
import { leftJournal } from "./journal-handoff";
import { placeKeyed } from "./key-lines";
import { dueRange, laterRange, readyRange, type Location, type ReadyKey } from "./keys";
import type { Opened, QueueOperations } from "./queue-operations";
import { messageRecord } from "./records";
import { delayedAt, removeAt } from "./settle-operations";

/** What group claims need from their store; `use` throws (StoreRefusedError) while it is not open. */
export interface GroupHost {
  use(): Opened;
  opened(): Opened | undefined;
}

/** A visible message and where it sits, for claiming it once picked. */
interface Placed {
  readonly message: QueuedMessage;
  readonly location: Location & { readonly in: "ready" | "delayed" };
}

/**
 * The embedded store's debounce and batch claims. A grouped message never enters the journal
 * (queue-operations.ts sends it to the B-tree), so the waiting messages of a group are the
 * queue's B-tree messages and its due retries, read here in one pass; which groups are due is
 * group-pick.ts. One process consumes the directory (consumer-lock.ts): its claims need no
 * lock of their own. What is claimed here is settled by `completeGroup`, or one by one by
 * retryLater, deadLetter and release, as single claims are.
 */
export class GroupOperations {
  constructor(
    private readonly host: GroupHost,
    private readonly ops: QueueOperations,
  ) {}

  async claimGroups(queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> {
    const { dbs } = this.host.use();
    const { tracker } = this.ops;
    const now = Date.now();
    const visible: Placed[] = [];
    for (const { key, value } of dbs.ready.getRange(readyRange(queue, 0))) {
      if (!tracker.claimedAt(queue, value.id)) visible.push({ message: value, location: { in: "ready", key: key as ReadyKey } });
    }
    for (const { key, value } of dbs.delayed.getRange(dueRange(queue, now))) {
      if (!tracker.claimedAt(queue, value.id)) visible.push({ message: value, location: { in: "delayed", key } });
    }
    const busy = new Set<string>();
    if (rule.kind === "debounce") {
      for (const location of tracker.claimedLocations(queue)) if (location.in !== "journal") busy.add(location.groupKey ?? "");
      // A key whose burst waits for its retry runs nothing newer before it.
      const { start, end } = laterRange(queue, now);
      for (const { value } of dbs.delayed.getRange({ start, end })) if (value.attempts > 0) busy.add(value.groupKey ?? "");
    }
    const placeOf = new Map<QueuedMessage, Placed>();
    for (const placed of visible) placeOf.set(placed.message, placed);
    const picked = pickGroups(
      visible.map((p) => p.message),
      busy,
      rule,
      limit,
      now,
    );
    for (const group of picked.groups) {
      for (const message of group) {
        const { location } = placeOf.get(message)!;
        tracker.claim(queue, message.id, { ...location, groupKey: message.groupKey ?? "" });
      }
    }
    return picked;
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
      else if (e.message.runAt !== undefined) tracker.delayedDueAt(e.queue, e.message.runAt);
    }
    // The key's next burst (a debounce waits for its run to end) may be claimed now.
    this.ops.notify(queue);
  }
}
