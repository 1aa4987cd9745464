/** Past this many ids, they are found through an index rather than by scanning. */
const SCAN_UP_TO = 32;

/**
 * Values by id (a message's, or a journal entry's number) for what a queue has claimed: few at a
 * time (its task's concurrency), one added and one removed per message. Not a Map: a Map with an
 * entry added and removed per message replaces its hash table again and again, and V8 links each
 * replaced table to the next; once one reached the old generation it kept every later table, and
 * what they held, alive through minor collections. Nor a dictionary object: its string keys are
 * internalized, and its number keys make a sparse array that grows to thousands of holes before
 * it turns into a dictionary.
 *
 * The ids sit in arrays that never shrink, in claim order (the order runs usually end in, so the
 * one sought is found first), scanned; an index by id is kept only while more are held.
 */
export class ClaimedIds<K extends string | number, V> {
  private readonly ids: (K | undefined)[] = [];
  private readonly items: (V | undefined)[] = [];
  private count = 0;
  /** Position of each id, while more than SCAN_UP_TO are held. */
  private index: Map<K, number> | undefined;

  get size(): number {
    return this.count;
  }

  get(id: K): V | undefined {
    const at = this.find(id);
    return at === -1 ? undefined : this.items[at];
  }

  /** Holds `value` for `id` (replacing what `id` held). */
  set(id: K, value: V): void {
    // An id built of concatenated parts is compared part by part; flat once a character was read.
    if (typeof id === "string") id.charCodeAt(0);
    const at = this.find(id);
    if (at !== -1) {
      this.items[at] = value;
      return;
    }
    this.ids[this.count] = id;
    this.items[this.count] = value;
    this.index?.set(id, this.count);
    this.count++;
    if (this.index === undefined && this.count > SCAN_UP_TO) this.index = new Map(this.ids.slice(0, this.count).map((held, i) => [held!, i]));
  }

  /** True when `id` was held. While scanning, those after it move up one place (claim order kept). */
  delete(id: K): boolean {
    const at = this.find(id);
    if (at === -1) return false;
    const { ids, items } = this;
    const last = --this.count;
    if (this.index === undefined) {
      for (let i = at; i < last; i++) {
        ids[i] = ids[i + 1];
        items[i] = items[i + 1];
      }
    } else {
      ids[at] = ids[last];
      items[at] = items[last];
      this.index.delete(id);
      if (at !== last) this.index.set(ids[at]!, at);
      if (this.count <= SCAN_UP_TO / 2) this.index = undefined;
    }
    // Cleared, not popped: the arrays keep their length and are not reallocated as claims come and go.
    ids[last] = undefined;
    items[last] = undefined;
    return true;
  }

  /** Forgets every id. */
  clear(): void {
    this.ids.fill(undefined);
    this.items.fill(undefined);
    this.count = 0;
    this.index = undefined;
  }

  has(id: K): boolean {
    return this.find(id) !== -1;
  }

  *values(): IterableIterator<V> {
    for (let i = 0; i < this.count; i++) yield this.items[i]!;
  }

  private find(id: K): number {
    if (this.index !== undefined) return this.index.get(id) ?? -1;
    const ids = this.ids;
    for (let i = 0; i < this.count; i++) if (ids[i] === id) return i;
    return -1;
  }
}
