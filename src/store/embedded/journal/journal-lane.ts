import { Packr } from "msgpackr";
import type { QueuedMessage } from "../../store";
import { messageMeta } from "../records";
import { heldBytes, heldForm } from "../held-message";
import { PAYLOAD_ENCODING, unpackKeepingProto } from "../../payload-codec";
import { doneOp, enqueueOp } from "./journal-format";
import type { JournalLog } from "./journal-log";
import { LaneWaiting } from "./lane-waiting";
import { ClaimedIds } from "../../claimed-ids";

/** How much the lane holds before new messages go to the B-tree instead. */
export interface JournalLaneLimits {
  /** Messages (default 10,000). */
  readonly maxMessages: number;
  /** Bytes of messages in memory, their raw bytes and what else they hold (default 64 MiB). */
  readonly maxBytes: number;
}

export const DEFAULT_LANE_LIMITS: JournalLaneLimits = { maxMessages: 10_000, maxBytes: 64 * 1024 * 1024 };

/** A message that lives in the journal (on disk) and in memory until a task is done with it. */
export interface LaneEntry {
  readonly entryId: number;
  /** Its place in the queue, from the same counter as the B-tree's keys. */
  readonly seq: number;
  readonly queue: string;
  readonly message: QueuedMessage;
  /** Bytes as written (what its copy forward writes again). */
  readonly bytes: number;
  /** Bytes it costs in memory (held-message.ts), which the lane's maxBytes bounds. */
  readonly memory: number;
  /** Where its latest copy is (an entry left behind in an old segment is copied forward). */
  segment: number;
  /** True while it waits in its queue's line (set by LaneWaiting). */
  waiting: boolean;
}

/** A message for the lane: its queue and its place there. */
export interface LaneItem {
  readonly queue: string;
  readonly seq: number;
  readonly message: QueuedMessage;
  /** Its memory cost (memoryOf), when the caller measured it already for hasRoomFor. */
  readonly memory?: number;
}

/** Same options as the B-tree's message databases: plain maps, Buffers kept as bytes. */
const packr = new Packr(PAYLOAD_ENCODING);

export function encodeMeta(message: QueuedMessage): Buffer {
  return packr.pack(messageMeta(message));
}

/** The message an enqueue operation holds; `raw` is used as given (the caller copies it out of a file's buffer if it must). */
export function decodeMessage(meta: Buffer, raw: Buffer | undefined): QueuedMessage {
  // A `__proto__` key comes back as the own key it was (msgpackr alone renames it).
  const decoded = unpackKeepingProto(meta, (b) => packr.unpack(b)) as QueuedMessage;
  return raw === undefined ? decoded : { ...decoded, raw };
}

/**
 * The fast lane of the embedded store: messages written to the append-only journal (one
 * group-committed frame per event-loop turn) and kept in memory until their task is done,
 * when a done-marker is appended. A queue's lane is FIFO; claims take from it directly.
 *
 * It holds a bounded amount. Past its limits the store writes new messages to the B-tree, as
 * it does for delayed retries and dead letters; at the next open every message still in the
 * journal is moved into the B-tree, so the lane starts empty after every restart.
 */
export class JournalLane {
  /** Entries nobody claimed, per queue, in the order they were committed. */
  private readonly waiting = new Map<string, LaneWaiting<LaneEntry>>();
  /**
   * Claimed entries and those whose done-marker is on its way (not copied forward: the copy
   * would outlive them), by entry id. Neither a Map nor a Set (claimed-ids.ts).
   */
  private readonly claimed = new ClaimedIds<number, LaneEntry>();
  private readonly finishing = new ClaimedIds<number, true>();
  private compacting = false;
  private nextEntryId = 1;
  /** Messages and bytes held, counting those still on their way to disk. */
  private count = 0;
  private held = 0;
  private memory = 0;

  constructor(
    private readonly log: JournalLog,
    private readonly limits: JournalLaneLimits = DEFAULT_LANE_LIMITS,
    /** Whether the disk has room to write this many bytes of copies (it may not, and the copies can wait). */
    private readonly roomFor: (bytes: number) => boolean = () => true,
  ) {
    // Entries two segments behind the one being written hold old segments (and every newer
    // one, which goes only after them) on disk: copy them forward.
    log.onRotated = (index) => void this.compact(index - 1);
  }

  /** Bytes of messages the lane holds, as written (they are on disk as well, until done). */
  get bytes(): number {
    return this.held;
  }

  /** Bytes the lane's messages cost in memory (bounded by maxBytes). */
  get memoryBytes(): number {
    return this.memory;
  }

  /** What `message` will cost the lane in memory (held-message.ts); past maxBytes, just over it. */
  memoryOf(message: QueuedMessage): number {
    return heldBytes(message, this.limits.maxBytes);
  }

  /** Writes a message to the journal; resolves once it is on disk and claimable. */
  enqueue(queue: string, seq: number, message: QueuedMessage, memory?: number): Promise<void> {
    return this.write([], [{ queue, seq, message, memory }]);
  }

  /** Writes several messages (an event's copies) in one frame: on disk together or not at all. */
  enqueueAll(items: readonly LaneItem[]): Promise<void> {
    return this.write([], items);
  }

  /** Whether the lane can take `messages` more messages costing `memory` bytes (memoryOf each). */
  hasRoomFor(messages: number, memory: number): boolean {
    return this.count + messages <= this.limits.maxMessages && this.memory + memory <= this.limits.maxBytes;
  }

  /** Waiting (unclaimed) entries of a queue, oldest first. */
  waitingIn(queue: string): LaneWaiting<LaneEntry> | undefined {
    return this.waiting.get(queue);
  }

  /** Enqueue time of the oldest message of a queue the lane holds (waiting or claimed); Infinity when none. */
  oldestEnqueuedAt(queue: string): number {
    let oldest = Infinity;
    for (const entry of this.waiting.get(queue)?.values() ?? []) {
      oldest = Math.min(oldest, entry.message.enqueuedAt);
      break; // waiting entries are in commit order: the first is the oldest
    }
    for (const entry of this.claimed.values()) if (entry.queue === queue) oldest = Math.min(oldest, entry.message.enqueuedAt);
    return oldest;
  }

  claim(entry: LaneEntry): void {
    if (!this.waiting.get(entry.queue)?.delete(entry)) return;
    this.claimed.set(entry.entryId, entry);
  }

  /** A claimed entry goes back to the waiting ones, at its place in the queue. */
  release(entryId: number): void {
    const entry = this.claimed.get(entryId);
    if (!entry) return;
    this.claimed.delete(entryId);
    // At its place in the queue (lane-waiting.ts).
    this.waitingOf(entry.queue).add(entry);
  }

  /**
   * A claimed entry is done: resolves once its done-marker is on disk (it rides with the next
   * frame, so under load it costs no write of its own). Until then the entry stays claimed; if
   * the write fails, it stays claimed and the caller gives it back.
   */
  async done(entryId: number): Promise<void> {
    if (!this.claimed.has(entryId)) return;
    this.finishing.set(entryId, true);
    try {
      await this.log.append([doneOp(entryId)]);
    } finally {
      this.finishing.delete(entryId);
    }
    const entry = this.claimed.get(entryId);
    if (entry) this.finish(entry);
  }

  /**
   * A claimed entry is let go without waiting for its done-marker, which is written whenever
   * convenient (the message is safe elsewhere already). Lost in a crash, the message is
   * delivered once more.
   */
  moved(entryId: number): void {
    const entry = this.claimed.get(entryId);
    if (!entry) return;
    this.finish(entry);
    this.log.appendLazily([doneOp(entryId)]);
  }

  /**
   * A claimed entry is finished and its task's output enqueued, in one frame: after a crash
   * either both happened or neither. Resolves once that frame is on disk.
   */
  async doneAndEnqueue(entryId: number, queue: string, seq: number, message: QueuedMessage): Promise<void> {
    return this.doneAndEnqueueAll(entryId, [{ queue, seq, message }]);
  }

  /** As doneAndEnqueue, with one output per consuming task: the marker and every output in one frame. */
  async doneAndEnqueueAll(entryId: number, items: readonly LaneItem[]): Promise<void> {
    this.finishing.set(entryId, true);
    try {
      await this.write([doneOp(entryId)], items);
    } finally {
      this.finishing.delete(entryId);
    }
    const input = this.claimed.get(entryId);
    if (input) this.finish(input);
  }

  /** Forgets everything (the store closed); the journal keeps it for the next open. */
  clear(): void {
    for (const line of this.waiting.values()) line.clear();
    this.waiting.clear();
    this.claimed.clear();
    this.count = 0;
    this.held = 0;
    this.memory = 0;
  }

  /** Appends `before` and an enqueue of each item in one frame; the messages are claimable once it is on disk. */
  private async write(before: Buffer[], items: readonly LaneItem[]): Promise<void> {
    const parts = [...before];
    const entries: Array<Omit<LaneEntry, "segment" | "waiting">> = [];
    let total = 0;
    let memory = 0;
    for (const { queue, seq, message, memory: measured } of items) {
      const meta = encodeMeta(message);
      const entryId = this.nextEntryId++;
      const bytes = meta.length + (message.raw?.length ?? 0);
      // What memory holds: the kept form (a large body as raw bytes only), measured once per message.
      const held = measured ?? heldBytes(message, Infinity);
      parts.push(...enqueueOp(entryId, seq, queue, meta, message.raw));
      entries.push({ entryId, seq, queue, message: heldForm(message), bytes, memory: held });
      total += bytes;
      memory += held;
    }
    this.hold(entries.length, total, memory);
    let segment: number;
    try {
      segment = await this.log.append(parts, entries.length);
    } catch (error) {
      this.hold(-entries.length, -total, -memory);
      throw error;
    }
    for (const entry of entries) this.waitingOf(entry.queue).add({ ...entry, segment, waiting: false });
  }

  /**
   * Copies entries living in segments older than `before` to the end of the journal, under the
   * same entry id: a done-marker and a new enqueue, in one frame, so that after a crash the
   * entry exists exactly once either way. Their old segments (and the newer ones kept behind
   * them) can then be deleted. Entries being finished are left alone; they go on their own.
   */
  private async compact(before: number): Promise<void> {
    if (this.compacting) return;
    const movers = [...this.claimed.values(), ...[...this.waiting.values()].flatMap((entries) => [...entries.values()])].filter(
      (entry) => entry.segment < before && !this.finishing.has(entry.entryId),
    );
    if (movers.length === 0) return;
    // The copies need room before the old segments can go: on a disk low on room, they wait.
    if (!this.roomFor(movers.reduce((sum, entry) => sum + entry.bytes, 0))) return;
    this.compacting = true;
    const parts: Buffer[] = [];
    for (const entry of movers) {
      parts.push(doneOp(entry.entryId), ...enqueueOp(entry.entryId, entry.seq, entry.queue, encodeMeta(entry.message), entry.message.raw));
    }
    try {
      const segment = await this.log.append(parts, movers.length);
      for (const entry of movers) {
        if (this.holds(entry)) {
          const old = entry.segment;
          entry.segment = segment;
          this.log.release(old);
        } else {
          // Finished meanwhile: its old segment was released then; the copy is dead too.
          this.log.release(segment);
        }
      }
    } catch {
      // The entries stay where they were; the next new segment tries again.
    } finally {
      this.compacting = false;
    }
  }

  private holds(entry: LaneEntry): boolean {
    return this.claimed.get(entry.entryId) === entry || this.waiting.get(entry.queue)?.has(entry) === true;
  }

  private finish(entry: LaneEntry): void {
    this.claimed.delete(entry.entryId);
    this.hold(-1, -entry.bytes, -entry.memory);
    this.log.release(entry.segment);
  }

  private hold(messages: number, bytes: number, memory: number): void {
    this.count += messages;
    this.held += bytes;
    this.memory += memory;
  }

  private waitingOf(queue: string): LaneWaiting<LaneEntry> {
    let entries = this.waiting.get(queue);
    if (!entries) this.waiting.set(queue, (entries = new LaneWaiting()));
    return entries;
  }
}
