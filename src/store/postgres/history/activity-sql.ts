import { deliveryStatusSql, type HistoryTables } from "./history-tables";

/**
 * Per task, source and time bucket (aligned on the epoch), counts of the deliveries of events
 * received since $1, by status. Parameters: since (ms), bucket width (ms).
 */
export function activitySql(tables: HistoryTables): string {
  const { events, runs } = tables;
  return `SELECT d.task, e.source, floor(e.received_at / $2::float8) * $2::float8 AS bucket,
      count(*) AS received,
      count(*) FILTER (WHERE s.status = 0) AS succeeded,
      count(*) FILTER (WHERE s.status = 1) AS pending,
      count(*) FILTER (WHERE s.status = 2) AS failed,
      count(*) FILTER (WHERE s.status = 3) AS dead
    FROM ${events} e
    CROSS JOIN LATERAL unnest(e.tasks) AS d(task)
    CROSS JOIN LATERAL (SELECT ${deliveryStatusSql(runs, "e.id", "d.task")} AS status) s
    WHERE e.received_at >= $1::float8
    GROUP BY d.task, e.source, bucket
    ORDER BY bucket, d.task, e.source`;
}
