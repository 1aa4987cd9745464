import type { HistoryTables } from "./history-tables";

/**
 * Deletes up to $2 events, with their runs, picked by `pick` (a SELECT of
 * ctids, limited by $2). SKIP LOCKED: replicas pruning at once take different rows, none waits.
 */
function pruneBatch(tables: HistoryTables, pick: string): string {
  const { events, runs } = tables;
  return `WITH gone AS (
      DELETE FROM ${events} WHERE ctid = ANY(ARRAY(${pick} FOR UPDATE SKIP LOCKED)) RETURNING id
    ), r AS (
      DELETE FROM ${runs} WHERE event_id IN (SELECT id FROM gone)
    )
    SELECT count(*) AS n FROM gone`;
}

/** Up to $2 of the oldest events received before $1. */
export function pruneOlderSql(tables: HistoryTables): string {
  return pruneBatch(tables, `SELECT ctid FROM ${tables.events} WHERE received_at < $1::float8 ORDER BY received_at LIMIT $2::integer`);
}

/** Up to $1 of the oldest events, whatever their age (the count bound). */
export function pruneOldestSql(tables: HistoryTables): string {
  return pruneBatch(tables, `SELECT ctid FROM ${tables.events} ORDER BY received_at, id LIMIT $1::integer`);
}

/** Up to $2 runs started before $1 whose event is not there (its replica died before writing it, or it was pruned first). */
export function pruneOrphanRunsSql(tables: HistoryTables): string {
  const { events, runs } = tables;
  return `DELETE FROM ${runs} WHERE ctid = ANY(ARRAY(
      SELECT r.ctid FROM ${runs} r WHERE r.started_at < $1::float8 AND NOT EXISTS (SELECT 1 FROM ${events} e WHERE e.id = r.event_id) LIMIT $2::integer))`;
}

export function countEventsSql(tables: HistoryTables): string {
  return `SELECT count(*) AS n FROM ${tables.events}`;
}

/** Events kept, and the bytes of both tables with their indexes and TOAST. */
export function historySizeSql(tables: HistoryTables): string {
  const { events, runs } = tables;
  return `SELECT (SELECT count(*) FROM ${events}) AS events, pg_total_relation_size('${events}') + pg_total_relation_size('${runs}') AS bytes`;
}
