import { emitList, type DeadLetter, type EmitRecord, type QueuedMessage } from "../store";
import { StoreRefusedError } from "../store-errors";
import { completeFromJournal, leftJournal } from "./journal-handoff";
import { advanceKey, placeKeyed, type Promoted } from "./key-lines";
import { deadLetterKey, type DelayedKey, type Location, type ReadyKey } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import type { Opened, QueueOperations } from "./queue-operations";
import { deadLetterRecord, messageRecord } from "./records";
import { checkStorable } from "../payload-codec";

/** What settling needs from its store; `use` throws (StoreRefusedError) while it is not open. */
export interface SettleHost {
  use(): Opened;
  opened(): Opened | undefined;
}

/**
 * What becomes of a claimed message: done (with its output, in the same step), back later as
 * a retry, or a dead letter. Each takes it from its place (B-tree or journal) and lets the
 * next message of its ordering key go ahead; the claims themselves are QueueOperations'.
 */
export class SettleOperations {
  constructor(
    private readonly host: SettleHost,
    private readonly ops: QueueOperations,
  ) {}

  /** Several emits (one per consuming task) are written with the input's removal: all in one step. */
  async complete(queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]): Promise<void> {
    const from = this.ops.tracker.claimedAt(queue, id);
    const emits = emitList(emit);
    if (!from && emits.length === 0) return;
    const { dbs, writer, tag, journal } = this.host.use();
    const keyedEmit = emits.some((e) => e.message.orderingKey !== undefined);
    // A delayed emit (ctx.emit with a delay) goes to `delayed`, by its time: not the journal's way.
    const delayedEmit = emits.some((e) => e.message.runAt !== undefined);
    // A debounced or batched task's messages stay in the B-tree, where its group claims look.
    const groupedEmit = emits.some((e) => e.message.groupKey !== undefined);
    if (from?.in === "journal" && journal && !keyedEmit && !delayedEmit && !groupedEmit) return completeFromJournal(this.ops, queue, id, from.entryId, journal, emits);
    const emitted = emits.map((e) => ({ ...e, key: [e.queue, this.ops.tracker.allocate(e.queue), tag] as ReadyKey, claimable: e.message.runAt === undefined }));
    for (const e of emitted) this.ops.tracker.adjust(e.queue, 1);
    const keyedInput = from?.in !== "journal" ? from?.orderingKey : undefined;
    let promoted: Promoted | undefined;
    try {
      // Checked before the write: lmdb keeps the puts made before a throw inside a transaction.
      if (emitted.length > 1 || keyedEmit) for (const e of emitted) checkStorable(e.message.payload, "payload");
      await writer.run<unknown>(() => {
        if (keyedInput !== undefined || keyedEmit) {
          // Reads the key lines: a transaction, so that nobody changes them in between.
          return dbs.ready.transaction(() => {
            void removeAt(dbs, from);
            if (keyedInput !== undefined) promoted = advanceKey(dbs, queue, keyedInput);
            for (const e of emitted) {
              if (e.message.runAt !== undefined) void dbs.delayed.put(delayedAt(e.key, e.message.runAt), messageRecord(e.message));
              else if (e.message.orderingKey !== undefined) e.claimable = placeKeyed(dbs, e.key, e.message, (seq) => this.ops.seqAbove(e.queue, seq));
              else void dbs.ready.put(e.key, messageRecord(e.message));
            }
          });
        }
        if (emitted.length === 0) return removeAt(dbs, from);
        // One transaction: the input leaves exactly when its outputs are recorded.
        return dbs.ready.batch(() => {
          void removeAt(dbs, from);
          for (const e of emitted) {
            if (e.message.runAt !== undefined) void dbs.delayed.put(delayedAt(e.key, e.message.runAt), messageRecord(e.message));
            else void dbs.ready.put(e.key, messageRecord(e.message));
          }
        });
      });
    } catch (error) {
      for (const e of emitted) this.ops.tracker.adjust(e.queue, -1);
      // A commit that failed gives the message back; a value that cannot be encoded leaves it
      // claimed, for the caller to retry or dead-letter.
      if (error instanceof StoreRefusedError) this.ops.abandon(queue, id);
      throw error;
    }
    // An input of the journal with a keyed output: the output is on disk, now the done-marker.
    await leftJournal(this.host.opened()?.journal?.lane, from);
    if (from && this.ops.tracker.unclaim(queue, id)) this.ops.tracker.adjust(queue, -1);
    if (promoted) this.promoted(queue, promoted);
    for (const e of emitted) {
      if (e.claimable) this.ops.inserted(e.queue, e.key[1], e.message);
      else if (e.message.runAt !== undefined) this.ops.delayedInserted(e.queue, delayedAt(e.key, e.message.runAt), e.message);
    }
  }

  /** A held-back message became its key's head: claims must look at its place, listeners may claim it. */
  private promoted(queue: string, { key, message }: Promoted): void {
    const [, seq, writer] = key;
    if (writer === this.host.opened()?.tag) return this.ops.inserted(queue, seq, message);
    this.ops.tracker.rewind(queue, seq);
    this.ops.notify(queue);
  }

  async retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    const { dbs, writer, tag } = this.host.use();
    const from = this.ops.tracker.claimedAt(queue, message.id);
    const key: DelayedKey = [queue, visibleAt, this.ops.tracker.allocate(queue), tag];
    try {
      await writer.run(() =>
        dbs.delayed.batch(() => {
          void removeAt(dbs, from);
          void dbs.delayed.put(key, messageRecord(message));
        }),
      );
    } catch (error) {
      this.ops.abandon(queue, message.id);
      throw error;
    }
    await leftJournal(this.host.opened()?.journal?.lane, from);
    // A grouped message waits in its group index, invisible until visibleAt.
    this.ops.tracker.groupIndex(queue)?.retry(message.id, { in: "delayed", key }, visibleAt);
    this.ops.tracker.delayedDueAt(queue, visibleAt);
    if (!(from && this.ops.tracker.unclaim(queue, message.id))) this.ops.tracker.adjust(queue, 1);
    if (visibleAt <= Date.now()) this.ops.notify(queue);
  }

  async deadLetter(letter: DeadLetter): Promise<void> {
    const { dbs, writer } = this.host.use();
    const { queue } = letter;
    const id = letter.message.id;
    const from = this.ops.tracker.claimedAt(queue, id);
    const keyed = from?.in !== "journal" ? from?.orderingKey : undefined;
    let promoted: Promoted | undefined;
    try {
      await writer.run<unknown>(() => {
        const write = () => {
          void removeAt(dbs, from);
          void dbs.dead.put(deadLetterKey(id), deadLetterRecord(letter));
          // A dead letter leaves the queue: the next message of its key goes ahead.
          if (keyed !== undefined) promoted = advanceKey(dbs, queue, keyed);
        };
        return keyed === undefined ? dbs.dead.batch(write) : dbs.dead.transaction(write);
      });
    } catch (error) {
      this.ops.abandon(queue, id);
      throw error;
    }
    this.ops.tracker.deadLetterDelta++;
    await leftJournal(this.host.opened()?.journal?.lane, from);
    if (from && this.ops.tracker.unclaim(queue, id)) this.ops.tracker.adjust(queue, -1);
    if (promoted) this.promoted(queue, promoted);
  }
}

/** Where a delayed message waits: with the retries, by its time. */
export function delayedAt([queue, seq, writer]: ReadyKey, runAt: number): DelayedKey {
  return [queue, runAt, seq, writer];
}

/** Removes a claimed message from the B-tree; one in the journal gets a done-marker instead. */
export function removeAt(dbs: EmbeddedDbs, location: Location | undefined): Promise<boolean> {
  if (!location || location.in === "journal") return Promise.resolve(true);
  return location.in === "ready" ? dbs.ready.remove(location.key) : dbs.delayed.remove(location.key);
}
