import { GroupIndex } from "../group-index";
import type { Location } from "./keys";
import { ClaimedIds } from "../claimed-ids";

/**
 * How often a claim looks at a queue's B-tree messages and retries from the start whatever this
 * process knows, to pick up messages another process put there.
 */
const RESCAN_MS = 1_000;

interface QueueBook {
  /** Next sequence number this process gives out. */
  nextSeq: number;
  /** Messages in the queue (waiting, delayed, claimed, and enqueues not yet committed). */
  count: number;
  /**
   * Every committed waiting message below this sequence number is claimed, so a claim scans
   * from here instead of skipping over the claimed head of the queue each time.
   */
  cursor: number;
  rescanAt: number;
  /** False once a scan found every waiting message of the B-tree claimed; true again on any change. */
  readyMayWait: boolean;
  /** Earliest time a retry of this queue may be due (0: look now; Infinity: none known). */
  dueAt: number;
  /** Messages handed out and not yet finished, by id. Lost on restart: that is at-least-once. */
  readonly claimed: ClaimedIds<string, Location>;
}

/**
 * What the embedded store keeps in memory per queue: counters and the claimed ids, never
 * the messages themselves, so memory stays flat however long the backlog on disk grows.
 */
export class QueueTracker {
  private readonly books = new Map<string, QueueBook>();
  /**
   * Dead letters this process added minus those it replayed, since a group claim last read the
   * dead letters' count: a count lower than that says another process replayed (or purged) some.
   */
  deadLetterDelta = 0;
  /** Grouped queues' waiting messages by group key (group-operations.ts), from the first group claim of this opening on. */
  private readonly groups = new Map<string, GroupIndex<Location>>();

  reset(): void {
    this.books.clear();
    this.deadLetterDelta = 0;
    this.groups.clear();
  }

  /** The queue's group index; undefined until a group claim built it. */
  groupIndex(queue: string): GroupIndex<Location> | undefined {
    return this.groups.get(queue);
  }

  /** A new, empty group index for the queue, for a group claim to fill from the disk. */
  newGroupIndex(queue: string): GroupIndex<Location> {
    const index = new GroupIndex<Location>(locationToken);
    this.groups.set(queue, index);
    return index;
  }

  /** Records what a scan of the disk found at open. */
  recovered(queue: string, maxSeq: number, count: number): void {
    const book = this.book(queue);
    book.nextSeq = Math.max(book.nextSeq, Math.floor(maxSeq) + 1);
    book.count += count;
  }

  allocate(queue: string): number {
    return this.book(queue).nextSeq++;
  }

  count(queue: string): number {
    return this.books.get(queue)?.count ?? 0;
  }

  adjust(queue: string, delta: number): void {
    const book = this.book(queue);
    // Messages another process added are not counted here; never report fewer than none.
    book.count = Math.max(0, book.count + delta);
  }

  /** Queues holding a message as far as this process knows (what `count` counts). */
  queuesHeld(): string[] {
    return [...this.books].filter(([, book]) => book.count > 0).map(([queue]) => queue);
  }

  /** Messages of the queue handed out and not finished. */
  claimedCount(queue: string): number {
    return this.books.get(queue)?.claimed.size ?? 0;
  }

  /** Where the queue's claimed messages are (a debounce looks for its keys' runs). */
  claimedLocations(queue: string): IterableIterator<Location> | readonly Location[] {
    return this.books.get(queue)?.claimed.values() ?? [];
  }

  claimedAt(queue: string, id: string): Location | undefined {
    return this.books.get(queue)?.claimed.get(id);
  }

  claim(queue: string, id: string, location: Location): void {
    this.book(queue).claimed.set(id, location);
  }

  /** Forgets a claim; returns where the message was. `back`: it is waiting again where it was (not settled). */
  unclaim(queue: string, id: string, back = false): Location | undefined {
    const claimed = this.books.get(queue)?.claimed;
    const location = claimed?.get(id);
    if (location) claimed?.delete(id);
    if (location !== undefined && location.in !== "journal" && location.groupKey !== undefined) {
      const index = this.groups.get(queue);
      if (back) index?.release(id);
      else index?.settle(id);
    }
    return location;
  }

  /** Where a claim starts scanning the B-tree's waiting messages; undefined when it need not. */
  readyScanFrom(queue: string, now: number): number | undefined {
    const book = this.refreshed(queue, now);
    return book.readyMayWait ? book.cursor : undefined;
  }

  /** A scan found every waiting message of the B-tree claimed. */
  readyDrained(queue: string): void {
    this.book(queue).readyMayWait = false;
  }

  /** Whether a claim must look for due retries. */
  delayedMayBeDue(queue: string, now: number): boolean {
    return this.refreshed(queue, now).dueAt <= now;
  }

  /** A retry of the queue falls due at `at` (or a scan found the next one there). */
  delayedDueAt(queue: string, at: number): void {
    const book = this.book(queue);
    book.dueAt = Math.min(book.dueAt, at);
  }

  /** After a scan of the retries: the earliest one not yet due (Infinity: none). */
  delayedScanned(queue: string, nextDueAt: number): void {
    this.book(queue).dueAt = nextDueAt;
  }

  private refreshed(queue: string, now: number): QueueBook {
    const book = this.book(queue);
    if (now >= book.rescanAt) {
      book.cursor = 0;
      book.rescanAt = now + RESCAN_MS;
      book.readyMayWait = true;
      book.dueAt = 0;
    }
    return book;
  }

  /** Every waiting message below `seq` is claimed. */
  advance(queue: string, seq: number): void {
    const book = this.book(queue);
    if (seq > book.cursor) book.cursor = seq;
  }

  /** A waiting message at `seq` is (again) unclaimed: the next claim must look there. */
  rewind(queue: string, seq: number): void {
    const book = this.book(queue);
    if (seq < book.cursor) book.cursor = seq;
    book.readyMayWait = true;
  }

  private book(queue: string): QueueBook {
    let book = this.books.get(queue);
    if (!book) this.books.set(queue, (book = { nextSeq: 1, count: 0, cursor: 0, rescanAt: 0, readyMayWait: true, dueAt: 0, claimed: new ClaimedIds<string, Location>() }));
    return book;
  }
}

/** A message's place on disk, as the group index tells arrivals apart. */
function locationToken(location: Location): readonly [string, number] {
  if (location.in === "journal") return ["journal", location.entryId];
  // Sequence numbers are unique per writer tag within a queue, ready and delayed alike.
  return location.in === "ready" ? [location.key[2], location.key[1]] : [location.key[3], location.key[2]];
}
