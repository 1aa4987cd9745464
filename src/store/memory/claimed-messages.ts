import type { QueuedMessage } from "../store";

/**
 * A queue's claimed messages by id. Backed by a prototype-less object in dictionary mode, not
 * a Map: a Map with an entry added and removed per message replaces its hash table again and
 * again, and V8 links each replaced table to the next one; once one of them reached the old
 * generation it kept every later table, and the messages they referenced, alive through minor
 * collections (each event was copied twice and promoted, freed only by a full collection). A
 * dictionary that grows or shrinks leaves its old table behind unlinked.
 */
export class ClaimedMessages {
  private readonly byId: Record<string, QueuedMessage> = Object.create(null) as Record<string, QueuedMessage>;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: string): QueuedMessage | undefined {
    return this.byId[id];
  }

  set(id: string, message: QueuedMessage): void {
    if (this.byId[id] === undefined) this.count++;
    this.byId[id] = message;
  }

  /** True when `id` was claimed. */
  delete(id: string): boolean {
    if (this.byId[id] === undefined) return false;
    delete this.byId[id];
    this.count--;
    return true;
  }

  *values(): IterableIterator<QueuedMessage> {
    for (const id in this.byId) yield this.byId[id];
  }
}
