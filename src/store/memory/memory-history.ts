import type { ActivityRow, EventNote, EventSummary, HistoryEvent, HistoryPage, HistoryQuery, HistoryStore, RunNote } from "../history";
import { handedOnForm } from "../payload-codec";
import { parseBody } from "../../sources/webhook/parse-body";
import { bucketOf, checkHistoryQuery, deliveryView, encodeCursor, eventStatus, isPast, matchesSearch, matchesStatus, newestFirst } from "../history-query";

/** Events the memory store keeps unless told otherwise: its history lives in the process's heap. */
export const DEFAULT_MEMORY_HISTORY_EVENTS = 10_000;

/** Runs of events not held kept at least (those noted a moment before their event must wait for it). */
const MIN_ORPHAN_RUNS = 1_000;

interface Kept {
  readonly note: EventNote;
  /** Estimated size, computed when first asked. */
  bytes?: number;
}

/**
 * The memory store's history. Notes are applied in the background (a turn of the event loop
 * later, in one batch), as a durable engine writes them: a request or a run never waits for
 * the history. Beyond `maxEvents` the oldest go, in that same background step.
 */
export class MemoryHistory implements HistoryStore {
  /** Oldest first, by receipt time then id: lists walk it from the end. */
  private readonly ordered: Kept[] = [];
  private readonly byId = new Map<string, Kept>();
  /** Runs by event id, in the order noted; kept even before their event is known. */
  private readonly runs = new Map<string, RunNote[]>();
  /**
   * Ids in `runs` whose event is not held, oldest first: runs noted a moment before their event,
   * and runs of events the bound dropped before they ran (a backlog). Only the newest few are
   * kept: the others would grow the heap past `maxEvents` until the retention cut.
   */
  private readonly orphans = new Set<string>();
  private readonly childrenOf = new Map<string, Set<string>>();
  private readonly replaysOf = new Map<string, Set<string>>();
  private pending: Array<EventNote | RunNote> = [];
  private scheduled: NodeJS.Immediate | undefined;

  constructor(private readonly maxEvents: number = DEFAULT_MEMORY_HISTORY_EVENTS) {}

  noteEvent(note: EventNote): void {
    // Copied now: the task that receives the same object may change it before the note is applied.
    // A body the raw bytes give back is not copied: it is parsed from them again when read.
    const payload = note.bodyFromRaw === true && note.raw !== undefined ? withoutBody(note.payload) : undefined;
    this.pending.push(payload === undefined ? { ...note, payload: snapshot(note.payload), bodyFromRaw: undefined } : { ...note, payload: snapshot(payload) });
    this.schedule();
  }

  noteRun(note: RunNote): void {
    this.pending.push(note);
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
    for (let i = this.ordered.length - 1; i >= 0; i--) {
      const { note } = this.ordered[i];
      if (q.after !== undefined && !isPast(note, q.after)) continue;
      if (q.since !== undefined && note.receivedAt < q.since) break;
      if (q.until !== undefined && note.receivedAt >= q.until) continue;
      if (q.source !== undefined && (note.origin.kind !== "webhook" || note.origin.source !== q.source)) continue;
      if (q.search !== undefined && !matchesSearch(q.search, note.id, note.origin, payloadOf(note))) continue;
      const summary = this.summary(note);
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
    const { note } = kept;
    const runs = this.runs.get(id) ?? [];
    const event: HistoryEvent = {
      ...this.summary(note),
      // A copy: what the caller does to it stays with the caller.
      payload: snapshot(payloadOf(note)),
      runs: runs.map((r) => r.run),
      replays: this.linked(this.replaysOf.get(id)),
      children: this.linked(this.childrenOf.get(id)),
    };
    const withRaw = note.raw === undefined ? event : { ...event, raw: note.raw };
    return note.traceId === undefined ? withRaw : { ...withRaw, traceId: note.traceId };
  }

  async activity(since: number, bucketMs: number): Promise<ActivityRow[]> {
    this.apply();
    const rows = new Map<string, { -readonly [K in keyof ActivityRow]: ActivityRow[K] }>();
    for (let i = this.ordered.length - 1; i >= 0; i--) {
      const { note } = this.ordered[i];
      if (note.receivedAt < since) break;
      const source = note.origin.kind === "webhook" ? note.origin.source : undefined;
      const bucketStart = bucketOf(note.receivedAt, bucketMs);
      for (const delivery of this.summary(note).deliveries) {
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
    let cut = 0;
    while (cut < this.ordered.length && this.ordered[cut].note.receivedAt < before) cut++;
    if (maxEvents !== undefined) cut = Math.max(cut, this.ordered.length - maxEvents);
    const removed = this.removeOldest(cut);
    // Runs whose event is gone (or never came) and that are as old as what was pruned.
    for (const [id, runs] of this.runs) {
      if (!this.byId.has(id) && runs.every((r) => r.run.startedAt < before)) {
        this.runs.delete(id);
        this.orphans.delete(id);
      }
    }
    return removed;
  }

  async size(): Promise<{ events: number; bytes: number }> {
    this.apply();
    let bytes = 0;
    for (const kept of this.ordered) bytes += (kept.bytes ??= estimateBytes(kept.note));
    for (const runs of this.runs.values()) for (const r of runs) bytes += 64 + (r.run.error?.stack?.length ?? r.run.error?.message.length ?? 0);
    return { events: this.ordered.length, bytes };
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
    if (this.pending.length > 0) this.applyPending();
  }

  private applyPending(): void {
    const notes = this.pending;
    this.pending = [];
    for (const note of notes) {
      if ("eventId" in note) this.addRun(note);
      else this.addEvent(note);
    }
    const slack = Math.max(1, Math.floor(this.maxEvents / 10));
    if (this.ordered.length > this.maxEvents + slack) {
      this.removeOldest(this.ordered.length - this.maxEvents);
    }
    const orphansKept = Math.max(MIN_ORPHAN_RUNS, slack);
    for (const id of this.orphans) {
      if (this.orphans.size <= orphansKept) break;
      this.orphans.delete(id);
      this.runs.delete(id);
    }
  }

  private addEvent(note: EventNote): void {
    // The first note of an id is the event; a later one (a sender's repeat stored again) adds nothing.
    if (this.byId.has(note.id)) return;
    const kept: Kept = { note };
    this.byId.set(note.id, kept);
    this.orphans.delete(note.id);
    // In its place, found from the end: an event out of order (an emitted value in the same
    // millisecond with a smaller id, a slow writer) is nearly always among the last few. Sorting
    // the whole list instead, at each batch, took a third of the received path's time.
    const { ordered } = this;
    let at = ordered.length;
    while (at > 0 && newestFirst(ordered[at - 1].note, note) < 0) at--;
    if (at === ordered.length) ordered.push(kept);
    else ordered.splice(at, 0, kept);
    if (note.parentId !== undefined) link(this.childrenOf, note.parentId, note.id);
    if (note.replayOf !== undefined) link(this.replaysOf, note.replayOf, note.id);
  }

  private addRun(note: RunNote): void {
    if (!this.byId.has(note.eventId)) this.orphans.add(note.eventId);
    const runs = this.runs.get(note.eventId);
    if (runs === undefined) this.runs.set(note.eventId, [note]);
    else runs.push(note);
  }

  private removeOldest(count: number): number {
    if (count <= 0) return 0;
    const gone = this.ordered.splice(0, count);
    for (const { note } of gone) {
      this.byId.delete(note.id);
      this.runs.delete(note.id);
      if (note.parentId !== undefined) unlink(this.childrenOf, note.parentId, note.id);
      if (note.replayOf !== undefined) unlink(this.replaysOf, note.replayOf, note.id);
      this.childrenOf.delete(note.id);
      this.replaysOf.delete(note.id);
    }
    return gone.length;
  }

  private summary(note: EventNote): EventSummary {
    const runs = this.runs.get(note.id) ?? [];
    const deliveries = note.deliveries.map((d) => deliveryView(d, runs));
    const summary: { -readonly [K in keyof EventSummary]: EventSummary[K] } = {
      id: note.id,
      origin: note.origin,
      receivedAt: note.receivedAt,
      status: eventStatus(note.origin, deliveries),
      deliveries,
    };
    if (note.name !== undefined) summary.name = note.name;
    if (note.parentId !== undefined) summary.parentId = note.parentId;
    if (note.replayOf !== undefined) summary.replayOf = note.replayOf;
    return summary;
  }

  /** Linked ids of events still kept, oldest first. */
  private linked(ids: ReadonlySet<string> | undefined): string[] {
    if (ids === undefined) return [];
    const kept = [...ids].flatMap((id) => {
      const k = this.byId.get(id);
      return k === undefined ? [] : [k.note];
    });
    return kept.sort((a, b) => newestFirst(b, a)).map((n) => n.id);
  }
}

function link(index: Map<string, Set<string>>, from: string, to: string): void {
  let set = index.get(from);
  if (set === undefined) index.set(from, (set = new Set()));
  set.add(to);
}

function unlink(index: Map<string, Set<string>>, from: string, to: string): void {
  const set = index.get(from);
  if (set === undefined) return;
  set.delete(to);
  if (set.size === 0) index.delete(from);
}

/** A webhook event's payload without its parsed body (kept as the raw bytes); undefined when it has none. */
function withoutBody(payload: unknown): Record<string, unknown> | undefined {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload) || !("body" in payload)) return undefined;
  const { body: _fromRaw, ...rest } = payload as Record<string, unknown>;
  return rest;
}

/** The payload as noted: a body left out is parsed again from the raw bytes, as it arrived. */
function payloadOf(note: EventNote): unknown {
  if (note.bodyFromRaw !== true || note.raw === undefined) return note.payload;
  const rest = note.payload as Record<string, unknown>;
  const headers = rest.headers as Record<string, unknown> | undefined;
  const contentType = typeof headers?.["content-type"] === "string" ? (headers["content-type"] as string) : undefined;
  let body: unknown;
  try {
    body = parseBody("auto", note.raw, contentType);
  } catch {
    body = null; // it parsed when it came in: only a changed parser could fail here
  }
  return { body, ...rest };
}

/** The payload as it is now (plain data copied in one walk, anything else through the codec); as it is when it cannot be copied. */
function snapshot(payload: unknown): unknown {
  try {
    return handedOnForm(payload, "payload");
  } catch {
    return payload;
  }
}

/** About what the event would take written out: its raw bytes, its payload as JSON, some overhead. */
function estimateBytes(note: EventNote): number {
  let payload = 0;
  try {
    payload = JSON.stringify(payloadOf(note), (_key, value: unknown) => (Buffer.isBuffer(value) ? value.toString("base64") : value))?.length ?? 0;
  } catch {
    payload = 0;
  }
  return 128 + (note.raw?.length ?? 0) + payload + note.deliveries.length * 64;
}
