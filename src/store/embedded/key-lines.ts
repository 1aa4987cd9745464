import type { QueuedMessage } from "../store";
import { blockedRange, isBlockedKey, lineKey, type ReadyKey } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import { messageRecord, type MessageRecord } from "./records";

/*
 * Ordering keys on disk (QueuedMessage.orderingKey). Per queue and key, one message is the
 * key's head: in `ready` (waiting or claimed) or in `delayed` (waiting for a retry), with an
 * entry in `heads`. Every later message of that key waits in `blocked`, ordered by arrival.
 * When the head leaves (done or dead), the first blocked message moves to `ready` at its own
 * sequence number, which is its place in the queue; with none left, the key leaves `heads`.
 *
 * So claims read `ready` and `delayed` exactly as without keys: whatever is there may be
 * handed out. Every step runs inside one write transaction (the callers' `transaction()`), so
 * two writers (the app and the CLI replaying a dead letter) never make two heads, and a
 * restart finds the same lines: a head waiting for a retry still holds its key back.
 * Keyed messages skip the journal: the head decision needs what is on disk.
 */

/** A blocked message that became its key's head, now in `ready`. */
export interface Promoted {
  readonly key: ReadyKey;
  readonly message: MessageRecord;
}

/**
 * Writes a keyed message that enters its queue at `at`: to `ready` when its key has no head
 * (it becomes the head), else to `blocked`, at the end of its key's line (`seqAbove(n)` gives
 * a new sequence number past n when `at`'s is not). Call inside a write transaction. Returns
 * whether it is claimable.
 */
export function placeKeyed(dbs: EmbeddedDbs, at: ReadyKey, message: QueuedMessage, seqAbove: (seq: number) => number): boolean {
  const [queue, seq, writer] = at;
  const orderingKey = lineKey(message.orderingKey!);
  const record = messageRecord(message);
  if (dbs.heads.get([queue, orderingKey]) !== undefined) {
    // Each process numbers from its own counter: the CLI replaying a dead letter numbers it
    // from what it found on disk, which may be past the app's counter. A line is ordered by
    // number, so a message placed behind one numbered as high or higher takes a number past it.
    const last = lastBlockedSeq(dbs, queue, orderingKey);
    void dbs.blocked.put([queue, orderingKey, last !== undefined && last >= seq ? seqAbove(last) : seq, writer], record);
    return false;
  }
  void dbs.heads.put([queue, orderingKey], true);
  void dbs.ready.put(at, record);
  return true;
}

function lastBlockedSeq(dbs: EmbeddedDbs, queue: string, orderingKey: string): number | undefined {
  for (const key of dbs.blocked.getKeys({ start: [queue, orderingKey, Infinity], end: [queue, orderingKey], reverse: true, limit: 1 })) {
    if (isBlockedKey(key)) return key[2];
  }
  return undefined;
}

/**
 * The head of `orderingKey` left the queue: its next message, if any, moves to `ready` and is
 * returned. Call inside a write transaction.
 */
export function advanceKey(dbs: EmbeddedDbs, queue: string, given: string): Promoted | undefined {
  const orderingKey = lineKey(given);
  for (const { key, value } of dbs.blocked.getRange(blockedRange(queue, orderingKey))) {
    void dbs.blocked.remove(key);
    const ready: ReadyKey = [queue, key[2], key[3]];
    void dbs.ready.put(ready, value);
    return { key: ready, message: value };
  }
  void dbs.heads.remove([queue, orderingKey]);
  return undefined;
}
