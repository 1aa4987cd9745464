/** A message this process claimed and has not finished. */
export interface Held {
  readonly seq: number;
  readonly queue: string;
  readonly id: string;
  /** Whether it has an ordering key: finishing it may let the next message of its key go. */
  readonly keyed: boolean;
}

/**
 * The claims this process holds, by row and by queue and id (the runner names messages by
 * queue and id; rows are found by seq). A claim stays here until its outcome is written or
 * given up; the lease keeper renews exactly these.
 */
export class HeldMessages {
  private readonly bySeq = new Map<number, Held>();
  private readonly byId = new Map<string, number>();

  get size(): number {
    return this.bySeq.size;
  }

  hold(held: Held): void {
    this.bySeq.set(held.seq, held);
    this.byId.set(keyOf(held.queue, held.id), held.seq);
  }

  find(queue: string, id: string): Held | undefined {
    const seq = this.byId.get(keyOf(queue, id));
    return seq === undefined ? undefined : this.bySeq.get(seq);
  }

  drop(held: Held): void {
    if (this.bySeq.get(held.seq) !== held) return;
    this.bySeq.delete(held.seq);
    this.byId.delete(keyOf(held.queue, held.id));
  }

  seqs(): number[] {
    return [...this.bySeq.keys()];
  }

  clear(): void {
    this.bySeq.clear();
    this.byId.clear();
  }
}

function keyOf(queue: string, id: string): string {
  return `${queue}\u0000${id}`;
}
