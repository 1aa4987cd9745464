/** What a queue's waiting line needs of an entry: its place in the queue, and a mark it sets. */
export interface WaitingEntry {
  readonly seq: number;
  /** True while the entry is in a waiting line (set by the line). */
  waiting: boolean;
}

/** Claimed slots at the front of the array before it is cut (and only when they are most of it). */
const CUT_AFTER = 1_024;

/**
 * One queue's waiting entries of the journal lane, in queue order. Not a Map: a Map with an
 * entry added and removed per message replaces its hash table again and again, and V8 links
 * each replaced table to the next; once one reached the old generation it kept every later
 * table, and the messages they held, alive through minor collections (each was copied twice
 * and promoted, freed only by a full collection).
 *
 * An array read from a moving head: claims take from the front, so the entry removed is
 * usually the first one looked at. The slots left behind are cut off only when an entry is
 * added (never while a claim iterates).
 */
export class LaneWaiting<E extends WaitingEntry> {
  private items: (E | undefined)[] = [];
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `entry` at its place by `seq`: the end, unless it was taken back from a claim. */
  add(entry: E): void {
    if (entry.waiting) return;
    this.cut();
    entry.waiting = true;
    this.count++;
    const last = this.last();
    if (last === undefined || last.seq < entry.seq) {
      this.items.push(entry);
      return;
    }
    // Rare (a runner that stops, a failed write): the entry goes back among the others.
    let at = this.items.length;
    while (at > this.head && (this.items[at - 1] === undefined || this.items[at - 1]!.seq > entry.seq)) at--;
    this.items.splice(at, 0, entry);
  }

  /** Removes `entry`; false when it was not waiting. */
  delete(entry: E): boolean {
    if (!entry.waiting) return false;
    const items = this.items;
    for (let i = this.head; i < items.length; i++) {
      if (items[i] !== entry) continue;
      items[i] = undefined;
      entry.waiting = false;
      this.count--;
      while (this.head < items.length && items[this.head] === undefined) this.head++;
      return true;
    }
    return false;
  }

  /** Whether `entry` waits (in this line: an entry belongs to one queue). */
  has(entry: E): boolean {
    return entry.waiting;
  }

  /** Waiting entries, oldest first. */
  *values(): IterableIterator<E> {
    const items = this.items;
    for (let i = this.head; i < items.length; i++) {
      const entry = items[i];
      if (entry !== undefined && entry.waiting) yield entry;
    }
  }

  /** Forgets every entry. */
  clear(): void {
    for (const entry of this.values()) entry.waiting = false;
    this.items = [];
    this.head = 0;
    this.count = 0;
  }

  private last(): E | undefined {
    for (let i = this.items.length - 1; i >= this.head; i--) if (this.items[i] !== undefined) return this.items[i];
    return undefined;
  }

  private cut(): void {
    if (this.head < CUT_AFTER || this.head * 2 < this.items.length) return;
    this.items = this.items.slice(this.head);
    this.head = 0;
  }
}
