import type { EventSummary, HistoryEvent, HistoryPage, HistoryQuery } from "../../history";
import { checkHistoryQuery, encodeCursor, matchesStatus, matchesSearch, newestFirst, runsOldestFirst, type CheckedQuery, type CursorPosition } from "../../history-query";
import type { HistoryDbs } from "./history-env";
import { decodeBody, payloadOf } from "./history-body";
import { runOf, summaryOf, type SummaryRecord, type TimelineKey } from "./history-records";

/**
 * Most summaries one page reads while looking for matches. A search (a header value, a body
 * field) reads each event's body, and a narrow filter over a long history could read it all:
 * past this, the page ends early with a `next` cursor where the reading stopped, so that a
 * request takes a bounded time and the walk goes on from there.
 */
export const SCAN_BUDGET = 20_000;

/** Newest first: the timeline read backwards from the cursor (or `until`) down to `since`. */
export function listEvents(dbs: HistoryDbs | undefined, query: HistoryQuery): HistoryPage {
  const q = checkHistoryQuery(query);
  if (dbs === undefined) return { events: [] };
  const events: EventSummary[] = [];
  let scanned = 0;
  let lastKey: TimelineKey | undefined;
  for (const { key, value } of dbs.timeline.getRange(rangeOf(q))) {
    if (scanned++ >= SCAN_BUDGET) return { events, next: encodeCursor({ receivedAt: lastKey![0], id: lastKey![1] }) };
    lastKey = key;
    const summary = matching(dbs, q, key, value);
    if (summary === undefined) continue;
    if (events.length === q.limit) {
      // One more match exists: the page is full and another follows.
      const last = events[events.length - 1]!;
      return { events, next: encodeCursor(last) };
    }
    events.push(summary);
  }
  return { events };
}

function rangeOf(q: CheckedQuery): { start?: TimelineKey | [number]; end?: [number]; reverse: true; exclusiveStart?: boolean } {
  const range: { start?: TimelineKey | [number]; end?: [number]; reverse: true; exclusiveStart?: boolean } = { reverse: true };
  // Keys [receivedAt, id]; [t] sorts before every [t, id]: backwards from [until] leaves out time `until`, down to [since] keeps time `since`.
  if (q.after !== undefined && (q.until === undefined || q.after.receivedAt < q.until)) {
    range.start = [q.after.receivedAt, q.after.id];
    range.exclusiveStart = true;
  } else if (q.until !== undefined) {
    range.start = [q.until];
  }
  if (q.since !== undefined) range.end = [q.since];
  return range;
}

function matching(dbs: HistoryDbs, q: CheckedQuery, [receivedAt, id]: TimelineKey, record: SummaryRecord): EventSummary | undefined {
  if (q.source !== undefined && (record.q === 1 || record.o !== q.source)) return undefined;
  if (q.task !== undefined && !record.d.some((d) => d[0] === q.task)) return undefined;
  const summary = summaryOf(id, receivedAt, record);
  if (!matchesStatus(summary, q.task, q.status)) return undefined;
  if (q.search !== undefined) {
    if (q.search.kind === "text" && q.search.value === id) return summary;
    if (!matchesSearch(q.search, id, summary.origin, payloadOf(decodeBody(record.b)))) return undefined;
  }
  return summary;
}

/**
 * No id the history keeps is longer (they are UUIDs; none longer than lmdb's smallest key limit
 * could be an index key), and lmdb throws rather than find none for a key past its limit.
 */
const MOST_ID_BYTES = 1_978;

export function getEvent(dbs: HistoryDbs | undefined, id: string): HistoryEvent | undefined {
  if (dbs === undefined || typeof id !== "string" || id === "" || Buffer.byteLength(id) > MOST_ID_BYTES) return undefined;
  const at = dbs.index.get(id);
  if (at === undefined) return undefined;
  const record = dbs.timeline.get([at, id]);
  if (record === undefined) return undefined;
  const body = decodeBody(record.b);
  const event: { -readonly [K in keyof HistoryEvent]: HistoryEvent[K] } = {
    ...summaryOf(id, at, record),
    payload: payloadOf(body),
    runs: runsOldestFirst(record.u.map(runOf)),
    replays: kept(dbs, record.y),
    children: kept(dbs, record.c),
  };
  if (body.r !== undefined) event.raw = Buffer.from(body.r);
  if (body.t !== undefined) event.traceId = body.t;
  return event;
}

/** Of linked ids, those still kept, oldest first. */
function kept(dbs: HistoryDbs, ids: readonly string[] | undefined): string[] {
  if (ids === undefined) return [];
  const found: CursorPosition[] = [];
  for (const id of new Set(ids)) {
    const receivedAt = dbs.index.get(id);
    if (receivedAt !== undefined) found.push({ receivedAt, id });
  }
  return found.sort((a, b) => newestFirst(b, a)).map((e) => e.id);
}
