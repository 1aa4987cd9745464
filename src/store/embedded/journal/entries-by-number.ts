/**
 * Values by a whole-number id (the lane's entry ids), one added and one removed per message.
 * Not a Map or Set: one with an entry added and removed per message replaces its hash table
 * again and again, and V8 links each replaced table to the next; once one reached the old
 * generation it kept every later table, and what they held, alive through minor collections.
 * A prototype-less object's numbered elements (a dictionary once the ids are sparse) leave an
 * outgrown table behind unlinked, and numbers, unlike strings, are not internalized.
 */
export class EntriesByNumber<V> {
  private byId: Record<number, V> = Object.create(null) as Record<number, V>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: number): V | undefined {
    return this.byId[id];
  }

  has(id: number): boolean {
    return this.byId[id] !== undefined;
  }

  /** Holds `value` (not undefined) for `id`. */
  set(id: number, value: V): void {
    if (this.byId[id] === undefined) this.count++;
    this.byId[id] = value;
  }

  /** True when `id` was held. */
  delete(id: number): boolean {
    if (this.byId[id] === undefined) return false;
    delete this.byId[id];
    this.count--;
    return true;
  }

  /** Held values, by ascending id (rare: the whole table is read). */
  *values(): IterableIterator<V> {
    for (const id in this.byId) yield this.byId[id as unknown as number];
  }

  clear(): void {
    this.byId = Object.create(null) as Record<number, V>;
    this.count = 0;
  }
}
