import type { DeliveryStatus, RunOutcome } from "../../history";

/** The history's table names in one schema, quoted. */
export interface HistoryTables {
  readonly events: string;
  readonly runs: string;
}

export function historyTables(schema: string): HistoryTables {
  const q = `"${schema}"`;
  return { events: `${q}.history_events`, runs: `${q}.history_runs` };
}

/** A status as stored: the larger, the worse (an event shows its worst delivery's). */
export const STATUS_CODES: Readonly<Record<DeliveryStatus, number>> = { succeeded: 0, pending: 1, failed: 2, dead: 3 };
const STATUS_NAMES: readonly DeliveryStatus[] = ["succeeded", "pending", "failed", "dead"];

export function statusName(code: unknown): DeliveryStatus {
  return STATUS_NAMES[Number(code)] ?? "pending";
}

export const RUN_OUTCOMES: readonly RunOutcome[] = ["success", "retry", "dead_letter", "timeout", "superseded"];

/**
 * The status of the delivery of event `eventId` to `task` (SQL expressions): its latest run's,
 * by end time, or pending while it has none. Served by the runs' primary key (event_id, task, ...).
 */
export function deliveryStatusSql(runs: string, eventId: string, task: string): string {
  return `coalesce((${latestRunSql(runs, eventId, task, "r.status")}), 1)`;
}

/** `columns` of the latest run (by end time) of `task` on event `eventId`, as `r`. */
export function latestRunSql(runs: string, eventId: string, task: string, columns: string): string {
  return `SELECT ${columns} FROM ${runs} r WHERE r.event_id = ${eventId} AND r.task = ${task} ORDER BY r.started_at + r.duration_ms DESC, r.attempt DESC LIMIT 1`;
}

/** Event `e`'s deliveries as rows (task, queue, message_id, ord), from its three arrays; `ord` is the note's order. */
export function deliveriesOf(e: string): string {
  return `unnest(${e}.tasks, ${e}.queues, ${e}.message_ids) WITH ORDINALITY AS d(task, queue, message_id, ord)`;
}

/**
 * The deliveries of event `e` as a json array: task, queue, message id, status, runs so far and
 * the latest run's error message when it did not succeed; in the order the event was handed to
 * its tasks, as the other engines list them (a replay queues its copies in that order too).
 */
export function deliveriesJsonSql(tables: HistoryTables, e: string): string {
  const { runs } = tables;
  return `(SELECT coalesce(json_agg(json_build_object('task', d.task, 'queue', d.queue, 'messageId', d.message_id,
      'status', coalesce(l.status, 1), 'attempts', (SELECT count(*) FROM ${runs} c WHERE c.event_id = ${e}.id AND c.task = d.task),
      'lastError', l.error_message) ORDER BY d.ord), '[]')
    FROM ${deliveriesOf(e)}
    LEFT JOIN LATERAL (SELECT r.status, CASE WHEN r.outcome <> 'success' THEN r.error_message END AS error_message FROM ${runs} r
      WHERE r.event_id = ${e}.id AND r.task = d.task ORDER BY r.started_at + r.duration_ms DESC, r.attempt DESC LIMIT 1) l ON true)`;
}
