import type { EventSummary, HistoryEvent, HistoryPage, HistoryQuery } from "../../history";
import { checkHistoryQuery, encodeCursor, matchesDeliveries, matchesSearch, type CheckedQuery } from "../../history-query";
import type { HistoryDbs } from "./history-env";
import { CHILD, payloadOf, REPLAY, runOf, summaryOf, type LinkKey, type SummaryRecord, type TimelineKey } from "./history-records";

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
  if (!matchesDeliveries(summary.deliveries, q.task, q.status)) return undefined;
  if (q.search !== undefined) {
    if (q.search.kind === "text" && q.search.value === id) return summary;
    const body = dbs.bodies.get(id);
    if (body === undefined || !matchesSearch(q.search, id, summary.origin, payloadOf(body))) return undefined;
  }
  return summary;
}

export function getEvent(dbs: HistoryDbs | undefined, id: string): HistoryEvent | undefined {
  if (dbs === undefined || typeof id !== "string" || id === "") return undefined;
  const at = dbs.index.get(id);
  if (at === undefined) return undefined;
  const record = dbs.timeline.get([at, id]);
  const body = dbs.bodies.get(id);
  if (record === undefined || body === undefined) return undefined;
  const runs = [...dbs.runs.getRange({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER] })].map(({ value }) => runOf(value));
  const replays: string[] = [];
  const children: string[] = [];
  // Keys [id, kind, receivedAt, other]: replays then children, each oldest first.
  for (const key of dbs.links.getKeys({ start: [id, REPLAY], end: [id, CHILD + 1] }) as Iterable<LinkKey>) {
    (key[1] === REPLAY ? replays : children).push(key[3]);
  }
  const event: { -readonly [K in keyof HistoryEvent]: HistoryEvent[K] } = {
    ...summaryOf(id, at, record),
    payload: payloadOf(body),
    runs,
    replays,
    children,
  };
  if (body.r !== undefined) event.raw = Buffer.from(body.r);
  if (body.t !== undefined) event.traceId = body.t;
  return event;
}
