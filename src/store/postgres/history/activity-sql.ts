import type { HistoryTables } from "./history-tables";

/** How much earlier than the events it counts a run may have started (replicas' clocks apart). */
const CLOCK_SLACK_MS = 3_600_000;

/**
 * Per task, source and time bucket (aligned on the epoch), counts of the deliveries of events
 * received since $1, by status. Parameters: since (ms), bucket width (ms).
 *
 * In bulk rather than a lookup per delivery: the latest run of each delivery, among the runs
 * started since then (the runs' BRIN index on their start), by one hash aggregate (the greatest
 * [end, attempt, status] array); then one join with the events' deliveries.
 */
export function activitySql(tables: HistoryTables): string {
  const { events, runs } = tables;
  return `WITH delivered AS (
      SELECT e.id, e.source, floor(e.received_at / $2::float8) * $2::float8 AS bucket, t.task
      FROM ${events} e CROSS JOIN LATERAL unnest(e.tasks) AS t(task)
      WHERE e.received_at >= $1::float8
    ), latest AS (
      SELECT r.event_id, r.task, (max(ARRAY[r.started_at + r.duration_ms, r.attempt, r.status]))[3] AS status
      FROM ${runs} r
      WHERE r.started_at >= $1::float8 - ${CLOCK_SLACK_MS}
      GROUP BY r.event_id, r.task
    )
    SELECT d.task, d.source, d.bucket,
      count(*) AS received,
      count(*) FILTER (WHERE coalesce(l.status, 1) = 0) AS succeeded,
      count(*) FILTER (WHERE coalesce(l.status, 1) = 1) AS pending,
      count(*) FILTER (WHERE l.status = 2) AS failed,
      count(*) FILTER (WHERE l.status = 3) AS dead
    FROM delivered d
    LEFT JOIN latest l ON l.event_id = d.id AND l.task = d.task
    GROUP BY d.task, d.source, d.bucket
    ORDER BY d.bucket, d.task, d.source`;
}
