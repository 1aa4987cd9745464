import type { HistoryTables } from "./history-tables";

/**
 * One statement for a batch of notes: events, their deliveries and runs, each a json array of
 * rows (three parameters whatever the batch size: one statement text, prepared once). Insert
 * only, and ON CONFLICT DO NOTHING: a batch sent again after its commit's reply was lost
 * writes nothing twice. Returns how many rows of each went in.
 */
export function writeNotesSql(tables: HistoryTables): string {
  return `WITH ev AS (
      INSERT INTO ${tables.events} (id, received_at, source, queue, name, parent_id, replay_of, trace_id, payload, raw)
      SELECT x.id, x.r, x.s, x.q, x.n, x.p, x.o, x.t, x.payload, decode(x.raw, 'base64')
      FROM json_to_recordset($1::json) AS x(id text, r float8, s text, q text, n text, p text, o text, t text, payload jsonb, raw text)
      ON CONFLICT (id) DO NOTHING
      RETURNING 1
    ), dl AS (
      INSERT INTO ${tables.deliveries} (event_id, task, queue, message_id, received_at)
      SELECT x.e, x.k, x.q, x.m, x.r
      FROM json_to_recordset($2::json) AS x(e text, k text, q text, m text, r float8)
      ON CONFLICT (event_id, task) DO NOTHING
      RETURNING 1
    ), rn AS (
      INSERT INTO ${tables.runs} (event_id, task, attempt, started_at, duration_ms, outcome, status, error_type, error_message, error_stack, emitted)
      SELECT x.e, x.k, x.a, x.s, x.d, x.o, x.st, x.et, x.em, x.es, x.x
      FROM json_to_recordset($3::json) AS x(e text, k text, a integer, s float8, d float8, o text, st smallint, et text, em text, es text, x text[])
      ON CONFLICT (event_id, task, started_at, attempt) DO NOTHING
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM ev) AS events, (SELECT count(*) FROM dl) AS deliveries, (SELECT count(*) FROM rn) AS runs`;
}
