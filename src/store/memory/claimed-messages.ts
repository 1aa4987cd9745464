import type { QueuedMessage } from "../store";

/** Past this many claimed messages, ids are found through an index rather than by scanning. */
const SCAN_UP_TO = 32;

/**
 * A queue's claimed messages, found by id. Not a Map: a Map with an entry added and removed per
 * message replaces its hash table again and again, and V8 links each replaced table to the
 * next one; once one of them reached the old generation it kept every later table, and the
 * messages they referenced, alive through minor collections (each event was copied twice and
 * promoted, and freed only by a full collection). Nor a dictionary object: its keys are
 * internalized, a string-table insertion per message.
 *
 * The few messages a queue usually has claimed (its task's concurrency) sit in an array that
 * never shrinks, in claim order, scanned by id; an index by id is kept only while more are
 * claimed (then the last message takes the place of one removed).
 */
export class ClaimedMessages {
  private readonly items: (QueuedMessage | undefined)[] = [];
  private count = 0;
  /** Position of each claimed message by id, while more than SCAN_UP_TO are claimed. */
  private index: Map<string, number> | undefined;

  get size(): number {
    return this.count;
  }

  get(id: string): QueuedMessage | undefined {
    const at = this.find(id);
    return at === -1 ? undefined : this.items[at];
  }

  /** Claims `message` (replacing a claimed message with its id). */
  add(message: QueuedMessage): void {
    // A UUID from node:crypto is a string of many concatenated parts: V8 compares such a string
    // part by part (about 100 ns), and flat once one character was read (a few ns).
    message.id.charCodeAt(0);
    const at = this.find(message.id);
    if (at !== -1) {
      this.items[at] = message;
      return;
    }
    this.items[this.count] = message;
    this.index?.set(message.id, this.count);
    this.count++;
    if (this.index === undefined && this.count > SCAN_UP_TO) this.index = new Map(this.items.slice(0, this.count).map((m, i) => [m!.id, i]));
  }

  /**
   * True when `id` was claimed. While scanning, the messages after it move up one place: they
   * stay in claim order, the order runs usually end in, so the next one is found first (ids that
   * differ are compared character by character; the one sought is the same string).
   */
  delete(id: string): boolean {
    const at = this.find(id);
    if (at === -1) return false;
    const items = this.items;
    const last = --this.count;
    if (this.index === undefined) {
      for (let i = at; i < last; i++) items[i] = items[i + 1];
    } else {
      const moved = items[last]!;
      items[at] = moved;
      this.index.delete(id);
      if (at !== last) this.index.set(moved.id, at);
      if (this.count <= SCAN_UP_TO / 2) this.index = undefined;
    }
    // Cleared, not popped: the array keeps its length and is not reallocated as claims come and go.
    items[last] = undefined;
    return true;
  }

  *values(): IterableIterator<QueuedMessage> {
    for (let i = 0; i < this.count; i++) yield this.items[i]!;
  }

  private find(id: string): number {
    if (this.index !== undefined) return this.index.get(id) ?? -1;
    const items = this.items;
    for (let i = 0; i < this.count; i++) if (items[i]!.id === id) return i;
    return -1;
  }
}
