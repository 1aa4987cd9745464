import type { ActivityRow, EventNote, EventSummary, HistoryEvent, HistoryPage, HistoryQuery, HistoryStore, RunNote } from "../history";
import { bucketOf, checkHistoryQuery, deliveryView, encodeCursor, eventStatus, isPast, matchesSearch, matchesStatus, newestFirst, runsOldestFirst } from "../history-query";
import { EVENT_RECORD, FRAME_BYTES, HistoryLog, type LogSegment } from "./history-log";
import { readEventDetails, readEventHead, readEventPayload, readRun, readRunEventId, writeEvent, writeRun, type EventDetails } from "./memory-history-record";
import { hides, HistoryView, type ViewEntry } from "./history-view";
import { RecordReader } from "./record-bytes";

/** Events the memory store keeps unless told otherwise: its history lives in the process's memory. */
export const DEFAULT_MEMORY_HISTORY_EVENTS = 10_000;

/**
 * Bytes of events it keeps at most unless told otherwise (raw bodies, payloads, runs' errors):
 * 10,000 large webhooks would otherwise hold gigabytes of memory.
 */
export const DEFAULT_MEMORY_HISTORY_BYTES = 64 * 1024 * 1024;

/**
 * Runs kept at most: ten an event on average (retries), and a thousand at least (runs of
 * events no longer held, or noted a moment before their event).
 */
const RUNS_PER_EVENT = 10;
const MIN_RUNS = 1_000;

/**
 * The memory store's history: its notes written, as they come, into a log of bytes outside the
 * heap (history-log.ts); a read indexes the log (history-view.ts) and keeps that index until
 * the log changes. A request or a run pays for writing its note and nothing else. Reads show
 * the newest `maxEvents`; the log holds a tenth more, and beyond that, or `maxBytes`, its
 * oldest segment goes (the newest stays, however large).
 */
export class MemoryHistory implements HistoryStore {
  private readonly log: HistoryLog;
  /**
   * Events pruned whose records may still be in the log (their segment holds others, a repeat of
   * the id lies in a later one): by id, the log's end when pruned (its records before it, and
   * its runs', are hidden). In the order pruned, a key pruned again moved to the end.
   */
  private readonly hidden = new Map<string, number>();
  private view: HistoryView | undefined;
  /** The log's drops and the prunes when `view` was made (it reads on from there while they hold), and the log's version it has read. */
  private viewMadeAt = "";
  private viewRead = -1;
  private prunes = 0;

  constructor(
    private readonly maxEvents: number = DEFAULT_MEMORY_HISTORY_EVENTS,
    maxBytes: number = DEFAULT_MEMORY_HISTORY_BYTES,
  ) {
    this.log = new HistoryLog({ maxEvents, maxRuns: Math.max(MIN_RUNS, maxEvents * RUNS_PER_EVENT), maxBytes }, (segment) => this.dropping(segment));
  }

  noteEvent(note: EventNote): void {
    writeEvent(this.log, note);
  }

  noteRun(note: RunNote): void {
    writeRun(this.log, note);
  }

  /** Notes are in the log as soon as made. */
  async flush(): Promise<void> {}

  async list(query: HistoryQuery = {}): Promise<HistoryPage> {
    const q = checkHistoryQuery(query);
    const { ordered } = this.current();
    const events: EventSummary[] = [];
    let next: string | undefined;
    for (let i = ordered.length - 1; i >= 0; i--) {
      const entry = ordered[i]!;
      if (q.after !== undefined && !isPast(entry, q.after)) continue;
      if (q.since !== undefined && entry.receivedAt < q.since) break;
      if (q.until !== undefined && entry.receivedAt >= q.until) continue;
      if (q.source !== undefined && (entry.origin.kind !== "webhook" || entry.origin.source !== q.source)) continue;
      if (q.search !== undefined && !matchesSearch(q.search, entry.id, entry.origin, readEventPayload(entry).payload)) continue;
      const summary = summaryOf(entry);
      if (!matchesStatus(summary, q.task, q.status)) continue;
      if (events.length === q.limit) {
        next = encodeCursor(events[events.length - 1]!);
        break;
      }
      events.push(summary);
    }
    return next === undefined ? { events } : { events, next };
  }

  async get(id: string): Promise<HistoryEvent | undefined> {
    const view = this.current();
    const entry = view.byId.get(id);
    if (entry === undefined) return undefined;
    const details = readEventDetails(entry);
    const { raw, payload } = readEventPayload(entry);
    const event: HistoryEvent = {
      ...summaryOf(entry, details),
      payload,
      runs: runsOldestFirst(runsOf(entry).map((r) => r.run)),
      replays: linked(view, entry.replays),
      children: linked(view, entry.children),
    };
    const withRaw = raw === undefined ? event : { ...event, raw };
    return details.traceId === undefined ? withRaw : { ...withRaw, traceId: details.traceId };
  }

  async activity(since: number, bucketMs: number): Promise<ActivityRow[]> {
    const { ordered } = this.current();
    const rows = new Map<string, { -readonly [K in keyof ActivityRow]: ActivityRow[K] }>();
    for (let i = ordered.length - 1; i >= 0; i--) {
      const entry = ordered[i]!;
      if (entry.receivedAt < since) break;
      const source = entry.origin.kind === "webhook" ? entry.origin.source : undefined;
      const bucketStart = bucketOf(entry.receivedAt, bucketMs);
      for (const delivery of summaryOf(entry).deliveries) {
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
    const { ordered, beyond, byId } = this.current();
    const end = this.log.end;
    let cut = 0;
    while (cut < ordered.length && ordered[cut]!.receivedAt < before) cut++;
    if (maxEvents !== undefined) cut = Math.max(cut, ordered.length - maxEvents);
    if (cut <= 0) return 0;
    for (let i = 0; i < cut; i++) this.hide(ordered[i]!.id, end);
    // Older still, and not shown: they go with the others, so that their segments can.
    for (const id of beyond) this.hide(id, end);
    this.prunes++;
    // Segments that hold nothing but pruned events (and runs) go now.
    while (this.log.segments.length > 1 && this.showsNothing(this.log.segments[0]!, byId)) this.log.dropOldest();
    return cut;
  }

  async size(): Promise<{ events: number; bytes: number }> {
    return { events: this.current().ordered.length, bytes: this.log.bytes };
  }

  private current(): HistoryView {
    const madeAt = `${this.log.drops}/${this.prunes}`;
    if (this.view === undefined || this.viewMadeAt !== madeAt) {
      this.view = new HistoryView(this.log, this.hidden, this.maxEvents);
      this.viewMadeAt = madeAt;
    } else if (this.viewRead !== this.log.version) {
      this.view.extend();
    }
    this.viewRead = this.log.version;
    return this.view;
  }

  /** Set again, an id moves to the end: the map stays in the order pruned. */
  private hide(id: string, end: number): void {
    this.hidden.delete(id);
    this.hidden.set(id, end);
  }

  /**
   * A segment leaves the log: ids pruned before its end have no record left (segments go oldest
   * first) and need no longer be hidden. The map is in the order pruned: the walk stops at the
   * first pruned later.
   */
  private dropping(segment: LogSegment): void {
    // The index holds the segments it was made of: kept, it would keep them (their buffers, the
    // values beside their records) until the next read. The log changed: it goes.
    this.view = undefined;
    const end = segment.start + segment.used;
    for (const [id, prunedAt] of this.hidden) {
      if (prunedAt > end) break;
      this.hidden.delete(id);
    }
  }

  /**
   * Whether the oldest segment holds nothing a read shows once pruned: no event still held, and
   * no run of one (a run noted before its event lies in an older segment than the event).
   * `byId`: the events held before the prune.
   */
  private showsNothing(segment: LogSegment, byId: ReadonlyMap<string, ViewEntry>): boolean {
    const { buf } = segment;
    for (let at = 0; at < segment.used; at += FRAME_BYTES + buf.readUInt32LE(at + 1)) {
      const reader = new RecordReader(buf, at + FRAME_BYTES);
      const id = buf[at] === EVENT_RECORD ? readEventHead(segment, reader).id : readRunEventId(reader);
      const entry = byId.get(id);
      if (entry !== undefined && !hides(this.hidden, id, entry.position)) return false;
    }
    return true;
  }
}

function runsOf(entry: ViewEntry): RunNote[] {
  return entry.runs === undefined ? [] : entry.runs.map((place) => readRun(entry.id, place));
}

/** An event in a list, made when asked: fresh objects, so a caller's changes stay with the caller. */
function summaryOf(entry: ViewEntry, details: EventDetails = readEventDetails(entry)): EventSummary {
  const runs = runsOf(entry);
  const deliveries = details.deliveries.map((d) => deliveryView(d, runs));
  const summary: { -readonly [K in keyof EventSummary]: EventSummary[K] } = {
    id: entry.id,
    origin: { ...entry.origin },
    receivedAt: entry.receivedAt,
    status: eventStatus(entry.origin, deliveries),
    deliveries,
  };
  if (details.name !== undefined) summary.name = details.name;
  if (entry.parentId !== undefined) summary.parentId = entry.parentId;
  if (entry.replayOf !== undefined) summary.replayOf = entry.replayOf;
  return summary;
}

/** Linked ids of events still held, oldest first. */
function linked(view: HistoryView, ids: readonly string[] | undefined): string[] {
  if (ids === undefined) return [];
  const held: ViewEntry[] = [];
  for (const id of ids) {
    const entry = view.byId.get(id);
    if (entry !== undefined) held.push(entry);
  }
  return held.sort((a, b) => newestFirst(b, a)).map((entry) => entry.id);
}
