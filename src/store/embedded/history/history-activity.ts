import type { ActivityRow } from "../../history";
import { bucketOf } from "../../history-query";
import type { HistoryDbs } from "./history-env";
import { ACTIVITY_BUCKET_MS } from "./apply-notes";
import { countSlot, type ActivityCounts, type ActivityKey } from "./history-records";

type Row = { -readonly [K in keyof ActivityRow]: ActivityRow[K] };

/**
 * Per task, source and bucket, from the per-minute counters the writer keeps (a day's overview
 * reads 1,440 rows per task, not a day of events). Exact for buckets that are whole minutes:
 * the minute `since` falls in, when `since` is not on a minute, is counted from its events;
 * other bucket widths count every event since `since`.
 */
export function activityOf(dbs: HistoryDbs | undefined, since: number, bucketMs: number): ActivityRow[] {
  if (!Number.isFinite(since)) throw new TypeError(`since must be a time in milliseconds since the epoch, got ${String(since)}`);
  if (!Number.isFinite(bucketMs) || bucketMs <= 0) throw new TypeError(`bucketMs must be a positive number of milliseconds, got ${String(bucketMs)}`);
  if (dbs === undefined) return [];
  const rows = new Map<string, Row>();
  const wholeMinutes = bucketMs % ACTIVITY_BUCKET_MS === 0;
  const firstFullMinute = Math.ceil(since / ACTIVITY_BUCKET_MS) * ACTIVITY_BUCKET_MS;
  // Events counted one by one: all of them, or those before the first whole minute.
  for (const { key, value } of dbs.timeline.getRange(wholeMinutes ? { start: [since], end: [firstFullMinute] } : { start: [since] })) {
    const source = value.q === 1 ? "" : value.o;
    for (const [task, status] of value.d) {
      const row = rowOf(rows, bucketOf(key[0], bucketMs), task, source);
      row.received++;
      bump(row, countSlot(status), 1);
    }
  }
  if (wholeMinutes) {
    for (const { key, value } of dbs.activity.getRange({ start: [firstFullMinute] }) as Iterable<{ key: ActivityKey; value: ActivityCounts }>) {
      const [minute, task, source] = key;
      const row = rowOf(rows, bucketOf(minute, bucketMs), task, source);
      row.received += value[0];
      for (const slot of [1, 2, 3, 4] as const) bump(row, slot, value[slot]);
    }
  }
  return [...rows.values()].filter((r) => r.received > 0).sort((a, b) => a.bucketStart - b.bucketStart || (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
}

function rowOf(rows: Map<string, Row>, bucketStart: number, task: string, source: string): Row {
  const key = `${bucketStart}\u0000${task}\u0000${source}`;
  let row = rows.get(key);
  if (row === undefined) {
    row = { task, bucketStart, received: 0, succeeded: 0, failed: 0, dead: 0, pending: 0 };
    if (source !== "") row.source = source;
    rows.set(key, row);
  }
  return row;
}

function bump(row: Row, slot: 1 | 2 | 3 | 4, by: number): void {
  if (slot === 1) row.succeeded += by;
  else if (slot === 2) row.failed += by;
  else if (slot === 3) row.dead += by;
  else row.pending += by;
}
