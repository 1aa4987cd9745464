import type { HistoryTables } from "./history-tables";

/**
 * One statement for a batch of notes: events (with their deliveries) and runs, each a json
 * array of rows (two parameters whatever the batch size: one statement text, prepared once).
 * Insert only. Its commit does not wait for the WAL to reach the disk (synchronous_commit off,
 * for this transaction only): a crash of the database may lose the last fraction of a second
 * of notes, which the history accepts, and the queues' own commits keep their guarantee.
 *
 * `repeat`: the batch (or part of it) may be written already (a try whose commit's reply was
 * lost, a note given twice), so a row already there is skipped (ON CONFLICT DO NOTHING). A
 * first try goes without it: the conflict check costs every row a speculative insertion, about
 * a tenth of the statement, and a first try that does meet a row fails whole (23505) and is
 * sent again with it.
 */
export function writeNotesSql(tables: HistoryTables, repeat: boolean): string {
  const skipEvent = repeat ? "ON CONFLICT (id) DO NOTHING" : "";
  const skipRun = repeat ? "ON CONFLICT (event_id, task, started_at, attempt) DO NOTHING" : "";
  return `WITH relaxed AS (
      SELECT set_config('synchronous_commit', 'off', true)
    ), ev AS (
      INSERT INTO ${tables.events} (id, received_at, source, queue, name, parent_id, replay_of, trace_id, tasks, queues, message_ids, payload, raw, body_from_raw)
      SELECT x.id, x.r, x.s, x.q, x.n, x.p, x.o, x.t, x.k, x.qs, x.ms, x.payload, decode(x.raw, 'base64'), x.b
      FROM jsonb_to_recordset($1::jsonb) AS x(id text, r float8, s text, q text, n text, p text, o text, t text, k text[], qs text[], ms text[], payload jsonb, raw text, b boolean)
      ${skipEvent}
    ), rn AS (
      INSERT INTO ${tables.runs} (event_id, task, attempt, started_at, duration_ms, outcome, status, error_type, error_message, error_stack, emitted)
      SELECT x.e, x.k, x.a, x.s, x.d, x.o, x.st, x.et, x.em, x.es, x.x
      FROM jsonb_to_recordset($2::jsonb) AS x(e text, k text, a integer, s float8, d float8, o text, st smallint, et text, em text, es text, x text[])
      ${skipRun}
    )
    SELECT count(*) AS relaxed FROM relaxed`;
}
