import { summaryColumns } from "./list-events-sql";
import type { HistoryTables } from "./history-tables";

/** One event in full: the summary's columns, payload and raw bytes, its runs (oldest first), replays and children. Parameter: the id. */
export function getEventSql(tables: HistoryTables): string {
  const { events, runs } = tables;
  return `SELECT ${summaryColumns(tables, "e")}, e.trace_id, e.payload, e.raw, e.body_from_raw,
      (SELECT coalesce(json_agg(json_build_object('task', r.task, 'attempt', r.attempt, 'startedAt', r.started_at, 'durationMs', r.duration_ms,
          'outcome', r.outcome, 'errorType', r.error_type, 'errorMessage', r.error_message, 'errorStack', r.error_stack, 'emitted', r.emitted)
        ORDER BY r.started_at, r.attempt, r.task), '[]') FROM ${runs} r WHERE r.event_id = e.id) AS runs,
      (SELECT coalesce(array_agg(x.id ORDER BY x.received_at, x.id), '{}') FROM ${events} x WHERE x.replay_of = e.id) AS replays,
      (SELECT coalesce(array_agg(x.id ORDER BY x.received_at, x.id), '{}') FROM ${events} x WHERE x.parent_id = e.id) AS children
    FROM ${events} e WHERE e.id = $1::text`;
}
