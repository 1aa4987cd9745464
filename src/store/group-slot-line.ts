import type { GroupItem } from "./group-index";

/** A message in a group index, with its arrival number. */
export interface Slot<R> {
  readonly item: GroupItem<R>;
  /** Arrival number: messages of one millisecond keep the order they came in. */
  readonly order: number;
}

/** Whether `a` came first: by enqueuedAt, then by arrival. */
export function before<R>(a: Slot<R>, b: Slot<R>): boolean {
  return a.item.enqueuedAt < b.item.enqueuedAt || (a.item.enqueuedAt === b.item.enqueuedAt && a.order < b.order);
}

/** One key's slots in arrival order (enqueuedAt, then order): appended at the end, taken from the front. */
export class SlotLine<R> {
  private items: Slot<R>[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  first(): Slot<R> | undefined {
    return this.items[this.head];
  }

  last(): Slot<R> | undefined {
    return this.length > 0 ? this.items[this.items.length - 1] : undefined;
  }

  /** In its place: at the end for an arrival, at the front for a released oldest message. */
  insert(slot: Slot<R>): void {
    const { items } = this;
    const last = this.last();
    if (last === undefined || !before(slot, last)) {
      items.push(slot);
      return;
    }
    if (before(slot, this.first()!) && this.head > 0) {
      items[--this.head] = slot;
      return;
    }
    let low = this.head;
    let high = items.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (before(slot, items[mid])) high = mid;
      else low = mid + 1;
    }
    items.splice(low, 0, slot);
  }

  take(count: number): Slot<R>[] {
    const taken = this.items.slice(this.head, this.head + count);
    this.head += taken.length;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return taken;
  }
}
