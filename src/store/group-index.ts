import type { GroupRule } from "./store";
import { MinHeap } from "./min-heap";
import { before, SlotLine, type Slot } from "./group-slot-line";

/** A grouped message as the index knows it; `ref` is how its engine finds the message itself. */
export interface GroupItem<R> {
  readonly id: string;
  readonly enqueuedAt: number;
  /** "" for the task as a whole (also a message queued before the task was grouped). */
  readonly groupKey: string;
  readonly ref: R;
}

/** What a claim handed out (each group oldest first, groups by their oldest message), as ClaimedGroups. */
export interface IndexedGroups<R> {
  readonly groups: GroupItem<R>[][];
  readonly nextDueAt?: number;
  readonly collecting: number;
}

/** One key's waiting messages, oldest first, and how many of its messages are claimed. */
interface Line<R> {
  readonly key: string;
  readonly waiting: SlotLine<R>;
  claimed: number;
  /** The due time its live entry in the due heap carries (undefined: none). */
  at: number | undefined;
  /** Bumped whenever `at` changes: older heap entries of the line are stale. */
  version: number;
}

interface DueEntry<R> {
  readonly at: number;
  readonly line: Line<R>;
  readonly version: number;
}

/** A group of `maxSize` waiting messages is due at once: sorted before every time. */
const FULL = -Infinity;

/**
 * The waiting messages of one grouped queue (debounce or batch), by group key, for the engines
 * that decide in their own process (memory, embedded): a claim costs what it hands out plus the
 * keys that are due, not the backlog. Keys are kept in a heap by the time their oldest group
 * falls due (GroupRule in store.ts), so a claim pops the due ones and merges them by oldest
 * message. Messages are visible, delayed (a retry, until its visibleAt) or claimed; the engine
 * tells the index of each change. Nothing here touches a message's storage.
 */
export class GroupIndex<R> {
  private readonly lines = new Map<string, Line<R>>();
  private readonly claimed = new Map<string, Slot<R>>();
  private readonly delayed = new MinHeap<{ readonly visibleAt: number; readonly slot: Slot<R>; readonly retrying: boolean }>((a, b) => a.visibleAt < b.visibleAt);
  /** Per key, its messages waiting for a retry: a debounced key is busy until they are back (its newest event must run last). */
  private readonly retrying = new Map<string, number>();
  private readonly due = new MinHeap<DueEntry<R>>((a, b) => a.at < b.at);
  /** Where each message is stored (tokenOf: a writer and a number), for engines that may be told twice of one arrival. */
  private readonly known = new Map<string, Set<number>>();
  private rule: GroupRule | undefined;
  private visibleCount = 0;
  private nextOrder = 0;
  /** Keys and messages the claims went through, so tests can check that a claim's work does not grow with the backlog. */
  steps = 0;

  /** `tokenOf` names a message's place (the embedded store's key); an arrival whose place is already known is ignored. */
  constructor(private readonly tokenOf?: (ref: R) => readonly [string, number]) {}

  /** Messages visible (not claimed, not delayed). */
  get visible(): number {
    return this.visibleCount;
  }

  /** Messages waiting for their visibleAt. */
  get delayedCount(): number {
    return this.delayed.size;
  }

  /** Every message the index holds, claimed ones included. */
  get size(): number {
    return this.visibleCount + this.delayed.size + this.claimed.size;
  }

  /**
   * A message arrives, visible from `visibleAt` (0: now); `retrying` when it waits for a retry
   * (a failed run), not a delay it was sent with. False when its place was known already.
   */
  add(item: GroupItem<R>, visibleAt = 0, now = Date.now(), retrying = false): boolean {
    if (this.tokenOf) {
      const [writer, n] = this.tokenOf(item.ref);
      let numbers = this.known.get(writer);
      if (numbers === undefined) this.known.set(writer, (numbers = new Set()));
      if (numbers.has(n)) return false;
      numbers.add(n);
    }
    // One string per key, however many messages decoded their own copy of it.
    const line = this.lines.get(item.groupKey);
    const slot = { item: line === undefined ? item : { ...item, groupKey: line.key }, order: this.nextOrder++ };
    if (visibleAt <= now) this.show(slot);
    else {
      this.delayed.push({ visibleAt, slot, retrying });
      if (retrying) {
        this.retrying.set(slot.item.groupKey, (this.retrying.get(slot.item.groupKey) ?? 0) + 1);
        const held = this.lines.get(slot.item.groupKey);
        if (held !== undefined) this.touch(held);
      }
    }
    return true;
  }

  /** Whether the index holds a message stored at `ref` (engines with a `tokenOf`). */
  knows(ref: R): boolean {
    if (this.tokenOf === undefined) return false;
    const [writer, n] = this.tokenOf(ref);
    return this.known.get(writer)?.has(n) === true;
  }

  /** A claimed message is done (completed or dead): it leaves. Returns it, or undefined when it was not claimed here. */
  settle(id: string): GroupItem<R> | undefined {
    const slot = this.claimed.get(id);
    if (slot === undefined) return undefined;
    this.claimed.delete(id);
    if (this.tokenOf) {
      const [writer, n] = this.tokenOf(slot.item.ref);
      this.known.get(writer)?.delete(n);
    }
    const line = this.lines.get(slot.item.groupKey)!;
    line.claimed--;
    this.touch(line);
    return slot.item;
  }

  /** A claimed message comes back untouched, in its place among its key's waiting messages. */
  release(id: string): boolean {
    const slot = this.claimed.get(id);
    if (slot === undefined) return false;
    this.claimed.delete(id);
    this.lines.get(slot.item.groupKey)!.claimed--;
    this.show(slot);
    return true;
  }

  /** A claimed message waits for a retry at `visibleAt`, stored now at `ref`. */
  retry(id: string, ref: R, visibleAt: number, now = Date.now()): boolean {
    const item = this.settle(id);
    if (item === undefined) return false;
    this.add({ ...item, ref }, visibleAt, now, true);
    return true;
  }

  /** Hands out up to `limit` due groups (GroupRule), each now claimed. */
  claim(rule: GroupRule, limit: number, now: number): IndexedGroups<R> {
    if (!sameRule(rule, this.rule)) {
      this.rule = rule;
      this.rebuildDue();
    }
    while ((this.delayed.peek()?.visibleAt ?? Infinity) <= now) {
      const { slot, retrying } = this.delayed.pop()!;
      if (retrying) {
        const left = this.retrying.get(slot.item.groupKey)! - 1;
        if (left === 0) this.retrying.delete(slot.item.groupKey);
        else this.retrying.set(slot.item.groupKey, left);
      }
      this.show(slot);
    }
    // The due keys, merged by their oldest waiting message.
    const byOldest = new MinHeap<Line<R>>((a, b) => before(a.waiting.first()!, b.waiting.first()!));
    const popped: Line<R>[] = [];
    for (let top = this.due.peek(); top !== undefined && top.at <= now; top = this.due.peek()) {
      this.due.pop();
      this.steps++;
      if (top.version !== top.line.version || this.lines.get(top.line.key) !== top.line) continue;
      top.line.at = undefined;
      popped.push(top.line);
      byOldest.push(top.line);
    }
    const groups: GroupItem<R>[][] = [];
    const aside: Slot<R>[] = [];
    while (groups.length < limit && byOldest.size > 0) {
      const line = byOldest.pop()!;
      const group: GroupItem<R>[] = [];
      for (const slot of line.waiting.take(Math.min(line.waiting.length, rule.maxSize))) {
        this.steps++;
        this.visibleCount--;
        // Claimed already under this id (a duplicate): left waiting until that one is settled.
        if (this.claimed.has(slot.item.id)) {
          aside.push(slot);
          continue;
        }
        this.claimed.set(slot.item.id, slot);
        line.claimed++;
        group.push(slot.item);
      }
      if (group.length > 0) groups.push(group);
      // A batch key may have more than one group due.
      if (line.waiting.length > 0 && (dueOf(line, rule, this.retrying.has(line.key)) ?? Infinity) <= now) byOldest.push(line);
    }
    for (const slot of aside) this.show(slot);
    for (const line of popped) this.touch(line);
    const next = this.nextDue();
    const collecting = this.visibleCount;
    return next === undefined ? { groups, collecting } : { groups, nextDueAt: next === FULL ? now : next, collecting };
  }

  /** The earliest due time of a key (FULL: at once), stale heap entries dropped on the way. */
  private nextDue(): number | undefined {
    for (let top = this.due.peek(); top !== undefined; top = this.due.peek()) {
      if (top.version === top.line.version && this.lines.get(top.line.key) === top.line) return top.at;
      this.due.pop();
    }
    return undefined;
  }

  /** The oldest enqueuedAt of every message held (claimed and delayed ones included); undefined when none. */
  oldestEnqueuedAt(): number | undefined {
    let oldest = Infinity;
    for (const line of this.lines.values()) oldest = Math.min(oldest, line.waiting.first()?.item.enqueuedAt ?? Infinity);
    for (const { slot } of this.delayed.values()) oldest = Math.min(oldest, slot.item.enqueuedAt);
    for (const slot of this.claimed.values()) oldest = Math.min(oldest, slot.item.enqueuedAt);
    return oldest === Infinity ? undefined : oldest;
  }

  /** The delayed messages not visible at `now`. */
  delayedAfter(now: number): number {
    let count = 0;
    for (const { visibleAt } of this.delayed.values()) if (visibleAt > now) count++;
    return count;
  }

  private show(slot: Slot<R>): void {
    const key = slot.item.groupKey;
    let line = this.lines.get(key);
    if (line === undefined) this.lines.set(key, (line = { key, waiting: new SlotLine(), claimed: 0, at: undefined, version: 0 }));
    line.waiting.insert(slot);
    this.visibleCount++;
    this.touch(line);
  }

  /** A key changed: its entry in the due heap follows (a key with nothing left goes). */
  private touch(line: Line<R>): void {
    if (line.waiting.length === 0 && line.claimed === 0) {
      this.lines.delete(line.key);
      line.version++;
      return;
    }
    if (this.rule === undefined) return;
    const at = dueOf(line, this.rule, this.retrying.has(line.key));
    if (at === line.at) return;
    line.at = at;
    line.version++;
    if (at === undefined) return;
    this.due.push({ at, line, version: line.version });
    // Stale entries pile up while keys change often: start over from the keys.
    if (this.due.size > 2 * this.lines.size + 1024) this.rebuildDue();
  }

  private rebuildDue(): void {
    this.due.clear();
    for (const line of this.lines.values()) {
      line.at = undefined;
      line.version++;
      this.touch(line);
    }
  }
}

/** When a key's oldest group is due under `rule` (FULL: at once); undefined when it has none (or a debounced key runs or waits for a retry). */
function dueOf<R>(line: Line<R>, rule: GroupRule, retrying: boolean): number | undefined {
  const { waiting } = line;
  if (waiting.length === 0) return undefined;
  if (rule.kind === "batch") return waiting.length >= rule.maxSize ? FULL : waiting.first()!.item.enqueuedAt + rule.maxWaitMs;
  // A debounced key runs one group at a time; its end (or its retry's return) touches the key again.
  if (line.claimed > 0 || retrying) return undefined;
  if (waiting.length >= rule.maxSize) return FULL;
  const at = waiting.last()!.item.enqueuedAt + rule.periodMs;
  return rule.maxWaitMs === undefined ? at : Math.min(at, waiting.first()!.item.enqueuedAt + rule.maxWaitMs);
}

function sameRule(a: GroupRule, b: GroupRule | undefined): boolean {
  if (b === undefined || a.kind !== b.kind || a.maxSize !== b.maxSize || a.maxWaitMs !== b.maxWaitMs) return false;
  return a.kind === "batch" || (b.kind === "debounce" && a.periodMs === b.periodMs);
}
