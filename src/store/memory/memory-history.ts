import type { ActivityRow, EventNote, EventSummary, HistoryEvent, HistoryPage, HistoryQuery, HistoryStore, RunNote } from "../history";
import { bucketOf, checkHistoryQuery, deliveryView, encodeCursor, eventStatus, isPast, matchesSearch, matchesStatus, newestFirst, runsOldestFirst } from "../history-query";
import { KeptEvent, runsBytes, snapshot, type LinkKind } from "./memory-history-record";

/** Events the memory store keeps unless told otherwise: its history lives in the process's heap. */
export const DEFAULT_MEMORY_HISTORY_EVENTS = 10_000;

/**
 * Bytes of events it keeps at most unless told otherwise (raw bodies, payloads, runs' errors):
 * 10,000 large webhooks would otherwise hold gigabytes of the heap.
 */
export const DEFAULT_MEMORY_HISTORY_BYTES = 64 * 1024 * 1024;

/** Runs of events not held kept at least (those noted a moment before their event must wait for it). */
const MIN_ORPHAN_RUNS = 1_000;

/**
 * The memory store's history. Notes are applied in the background (a turn of the event loop
 * later, in one batch), as a durable engine writes them: a request or a run never waits for
 * the history. Beyond `maxEvents`, or `maxBytes` of events, the oldest go, in that same
 * background step (the newest event stays, however large).
 */
export class MemoryHistory implements HistoryStore {
  /** Oldest first from `head`, by receipt time then id: lists walk it from the end. */
  private ordered: KeptEvent[] = [];
  /** Entries before it were dropped (the array is compacted now and then, not at each drop). */
  private head = 0;
  private readonly byId = new Map<string, KeptEvent>();
  /**
   * Runs of events not held, oldest first: runs noted a moment before their event, and runs of
   * events the bound dropped before they ran (a backlog). Only the newest few are kept: the
   * others would grow the heap past `maxEvents` until the retention cut.
   */
  private readonly orphans = new Map<string, RunNote[]>();
  /** Links to events not held (a child or a replay noted before its parent or original, or after it went). */
  private readonly looseChildren = new Map<string, string[]>();
  private readonly looseReplays = new Map<string, string[]>();
  private pendingEvents: KeptEvent[] = [];
  private pendingRuns: RunNote[] = [];
  private scheduled: NodeJS.Immediate | undefined;

  /** Bytes of the events held (KeptEvent.bytes, runs included). */
  private heldBytes = 0;

  constructor(
    private readonly maxEvents: number = DEFAULT_MEMORY_HISTORY_EVENTS,
    private readonly maxBytes: number = DEFAULT_MEMORY_HISTORY_BYTES,
  ) {}

  noteEvent(note: EventNote): void {
    // The record copies the payload now; placing it among the others waits for the batch.
    this.pendingEvents.push(new KeptEvent(note));
    this.schedule();
  }

  noteRun(note: RunNote): void {
    this.pendingRuns.push(note);
    this.schedule();
  }

  async flush(): Promise<void> {
    this.apply();
  }

  async list(query: HistoryQuery = {}): Promise<HistoryPage> {
    const q = checkHistoryQuery(query);
    this.apply();
    const events: EventSummary[] = [];
    let next: string | undefined;
    const { ordered } = this;
    for (let i = ordered.length - 1; i >= this.head; i--) {
      const kept = ordered[i];
      if (q.after !== undefined && !isPast(kept, q.after)) continue;
      if (q.since !== undefined && kept.receivedAt < q.since) break;
      if (q.until !== undefined && kept.receivedAt >= q.until) continue;
      if (q.source !== undefined && (kept.origin.kind !== "webhook" || kept.origin.source !== q.source)) continue;
      if (q.search !== undefined && !matchesSearch(q.search, kept.id, kept.origin, kept.payloadNow())) continue;
      const summary = summaryOf(kept);
      if (!matchesStatus(summary, q.task, q.status)) continue;
      if (events.length === q.limit) {
        const last = events[events.length - 1];
        next = encodeCursor(last);
        break;
      }
      events.push(summary);
    }
    return next === undefined ? { events } : { events, next };
  }

  async get(id: string): Promise<HistoryEvent | undefined> {
    this.apply();
    const kept = this.byId.get(id);
    if (kept === undefined) return undefined;
    const event: HistoryEvent = {
      ...summaryOf(kept),
      // A copy: what the caller does to it stays with the caller.
      payload: snapshot(kept.payloadNow()),
      runs: runsOldestFirst(kept.runList().map((r) => r.run)),
      replays: this.linked(kept.links("replays")),
      children: this.linked(kept.links("children")),
    };
    const raw = kept.raw;
    const withRaw = raw === undefined ? event : { ...event, raw };
    return kept.traceId === undefined ? withRaw : { ...withRaw, traceId: kept.traceId };
  }

  async activity(since: number, bucketMs: number): Promise<ActivityRow[]> {
    this.apply();
    const rows = new Map<string, { -readonly [K in keyof ActivityRow]: ActivityRow[K] }>();
    for (let i = this.ordered.length - 1; i >= this.head; i--) {
      const kept = this.ordered[i];
      if (kept.receivedAt < since) break;
      const source = kept.origin.kind === "webhook" ? kept.origin.source : undefined;
      const bucketStart = bucketOf(kept.receivedAt, bucketMs);
      for (const delivery of summaryOf(kept).deliveries) {
        const key = `${delivery.task}\u0000${source ?? ""}\u0000${bucketStart}`;
        let row = rows.get(key);
        if (row === undefined) {
          row = { task: delivery.task, bucketStart, received: 0, succeeded: 0, failed: 0, dead: 0, pending: 0 };
          if (source !== undefined) row.source = source;
          rows.set(key, row);
        }
        row.received++;
        row[delivery.status]++;
      }
    }
    return [...rows.values()].sort((a, b) => a.bucketStart - b.bucketStart || (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  }

  async prune(before: number, maxEvents?: number): Promise<number> {
    this.apply();
    let cut = this.head;
    while (cut < this.ordered.length && this.ordered[cut].receivedAt < before) cut++;
    cut -= this.head;
    if (maxEvents !== undefined) cut = Math.max(cut, this.held - maxEvents);
    const removed = this.removeOldest(cut);
    // Runs whose event is gone (or never came) and that are as old as what was pruned.
    for (const [id, runs] of this.orphans) {
      if (runs.every((r) => r.run.startedAt < before)) this.orphans.delete(id);
    }
    return removed;
  }

  async size(): Promise<{ events: number; bytes: number }> {
    this.apply();
    let bytes = this.heldBytes;
    for (const runs of this.orphans.values()) bytes += runsBytes(runs);
    return { events: this.held, bytes };
  }

  private get held(): number {
    return this.ordered.length - this.head;
  }

  private schedule(): void {
    if (this.scheduled !== undefined) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined;
      this.apply();
    });
  }

  /** Applies the notes made so far, then drops the oldest events beyond the bound (with some slack, so it is rare). */
  private apply(): void {
    if (this.pendingEvents.length > 0 || this.pendingRuns.length > 0) this.applyPending();
  }

  private applyPending(): void {
    const events = this.pendingEvents;
    const runs = this.pendingRuns;
    this.pendingEvents = [];
    this.pendingRuns = [];
    // Events first: a run noted in the same batch as its event joins it at once.
    const added: KeptEvent[] = [];
    for (const kept of events) if (this.addEvent(kept)) added.push(kept);
    if (added.length > 0) this.place(added);
    for (const run of runs) this.addRun(run);
    const slack = Math.max(1, Math.floor(this.maxEvents / 10));
    if (this.held > this.maxEvents + slack) this.removeOldest(this.held - this.maxEvents);
    if (this.heldBytes > this.maxBytes) this.removeOldest(this.countOver(this.maxBytes - Math.floor(this.maxBytes / 10)));
    const orphansKept = Math.max(MIN_ORPHAN_RUNS, slack);
    if (this.orphans.size > orphansKept) {
      for (const id of this.orphans.keys()) {
        if (this.orphans.size <= orphansKept) break;
        this.orphans.delete(id);
      }
    }
  }

  /** Indexes and links a new event (placed in order by the caller); false for an id already held. */
  private addEvent(kept: KeptEvent): boolean {
    // The first note of an id is the event; a later one (a sender's repeat stored again) adds nothing.
    const { id } = kept;
    if (this.byId.has(id)) return false;
    this.byId.set(id, kept);
    if (this.orphans.size > 0) {
      const runs = this.orphans.get(id);
      if (runs !== undefined) {
        kept.adoptRuns(runs);
        this.orphans.delete(id);
      }
    }
    if (this.looseChildren.size > 0) adopt(kept, "children", this.looseChildren);
    if (this.looseReplays.size > 0) adopt(kept, "replays", this.looseReplays);
    this.heldBytes += kept.bytes;
    if (kept.parentId !== undefined) this.link(kept.parentId, id, "children", this.looseChildren);
    if (kept.replayOf !== undefined) this.link(kept.replayOf, id, "replays", this.looseReplays);
    return true;
  }

  /**
   * A batch of new events, each in its place: sorted, then merged into the list from its end.
   * Events arrive nearly in order, but ties in a millisecond are ordered by id, which is
   * random: walking back for each event (and splicing it in) cost more than all the rest.
   */
  private place(batch: KeptEvent[]): void {
    if (batch.length > 1) batch.sort(oldestFirst);
    const { ordered, head } = this;
    let i = ordered.length - 1;
    for (const kept of batch) ordered.push(kept);
    let to = ordered.length - 1;
    for (let j = batch.length - 1; j >= 0 && to > i; to--) {
      if (i >= head && newer(ordered[i], batch[j])) ordered[to] = ordered[i--];
      else ordered[to] = batch[j--];
    }
  }

  private addRun(note: RunNote): void {
    const kept = this.byId.get(note.eventId);
    if (kept !== undefined) {
      const before = kept.bytes;
      kept.addRun(note);
      this.heldBytes += kept.bytes - before;
      return;
    }
    const runs = this.orphans.get(note.eventId);
    if (runs === undefined) this.orphans.set(note.eventId, [note]);
    else runs.push(note);
  }

  private link(to: string, id: string, kind: LinkKind, loose: Map<string, string[]>): void {
    const target = this.byId.get(to);
    if (target === undefined) push(loose, to, id);
    else target.link(kind, id);
  }

  private unlink(from: string, id: string, kind: LinkKind, loose: Map<string, string[]>): void {
    const target = this.byId.get(from);
    if (target !== undefined) return target.unlink(kind, id);
    const ids = loose.get(from);
    if (ids === undefined) return;
    const at = ids.indexOf(id);
    if (at >= 0) ids.splice(at, 1);
    if (ids.length === 0) loose.delete(from);
  }

  private removeOldest(count: number): number {
    count = Math.min(count, this.held);
    if (count <= 0) return 0;
    const { ordered } = this;
    const end = this.head + count;
    for (let i = this.head; i < end; i++) {
      this.byId.delete(ordered[i].id);
      this.heldBytes -= ordered[i].bytes;
    }
    // Links to events going, from events staying (rare: a parent is older than its children).
    for (let i = this.head; i < end; i++) {
      const gone = ordered[i];
      if (gone.parentId !== undefined) this.unlink(gone.parentId, gone.id, "children", this.looseChildren);
      if (gone.replayOf !== undefined) this.unlink(gone.replayOf, gone.id, "replays", this.looseReplays);
    }
    this.head = end;
    // Compacted once half of it is dropped entries: each event is moved about once.
    if (this.head >= ordered.length / 2) {
      this.ordered = ordered.slice(this.head);
      this.head = 0;
    } else {
      ordered.fill(undefined as unknown as KeptEvent, end - count, end);
    }
    return count;
  }

  /** How many of the oldest go for the others to take at most `bytes` (the newest always stays). */
  private countOver(bytes: number): number {
    let over = this.heldBytes - bytes;
    let count = 0;
    for (let i = this.head; over > 0 && i < this.ordered.length - 1; i++, count++) over -= this.ordered[i].bytes;
    return count;
  }

  /** Linked ids of events still kept, oldest first. */
  private linked(ids: readonly string[] | undefined): string[] {
    if (ids === undefined) return [];
    const kept: KeptEvent[] = [];
    for (const id of ids) {
      const k = this.byId.get(id);
      if (k !== undefined) kept.push(k);
    }
    return kept.sort((a, b) => newestFirst(b, a)).map((k) => k.id);
  }
}

/** An event in a list, made when asked: fresh objects, so a caller's changes stay with the caller. */
function summaryOf(kept: KeptEvent): EventSummary {
  const runs = kept.runList();
  const deliveries = kept.deliveries.map((d) => deliveryView(d, runs));
  const summary: { -readonly [K in keyof EventSummary]: EventSummary[K] } = {
    id: kept.id,
    origin: { ...kept.origin },
    receivedAt: kept.receivedAt,
    status: eventStatus(kept.origin, deliveries),
    deliveries,
  };
  if (kept.name !== undefined) summary.name = kept.name;
  if (kept.parentId !== undefined) summary.parentId = kept.parentId;
  if (kept.replayOf !== undefined) summary.replayOf = kept.replayOf;
  return summary;
}

/** The list's order: by receipt time, then id. */
function oldestFirst(a: KeptEvent, b: KeptEvent): number {
  return a.receivedAt - b.receivedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Later in the list's order: received later, or in the same millisecond with a greater id. */
function newer(a: KeptEvent, b: KeptEvent): boolean {
  return a.receivedAt > b.receivedAt || (a.receivedAt === b.receivedAt && a.id > b.id);
}

function push(index: Map<string, string[]>, key: string, id: string): void {
  const ids = index.get(key);
  if (ids === undefined) index.set(key, [id]);
  else ids.push(id);
}

/** Links noted before their target: handed to it when it comes. */
function adopt(kept: KeptEvent, kind: LinkKind, loose: Map<string, string[]>): void {
  const ids = loose.get(kept.id);
  if (ids === undefined) return;
  loose.delete(kept.id);
  kept.adoptLinks(kind, ids);
}
