import type { HistoryTables } from "./history-tables";

/**
 * One statement for a batch of notes: events (with their deliveries) and runs, a parameter per
 * column holding that column of every row (see note-columns), made rows again by unnest: the
 * same parameters whatever the batch size, one statement text, prepared once. The values come
 * as array literals, which the database reads at a fraction of the cost of JSON; the payloads
 * and raw bodies, the longest, as their texts one after the other (split, not unquoted), each
 * payload parsed once, into its jsonb column; a single delivery's task, queue and message id
 * (and a single emitted id) as texts, made an array here (a literal of its own per row costs
 * a parse each). Insert only. Its commit does not wait for the WAL to reach the disk
 * (synchronous_commit off, for this transaction only): a crash of the database may lose the
 * last fraction of a second of notes, which the history accepts, and the queues' own commits
 * keep their guarantee.
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
  // The unnests in the select list, not in FROM: they then hand their rows on one by one, where
  // a function in FROM writes all of them to a tuple store first (about a tenth of the statement).
  // In lockstep, as one unnest of several arrays (the columns are of one length).
  return `WITH relaxed AS (
      SELECT set_config('synchronous_commit', 'off', true)
    ), ev AS (
      INSERT INTO ${tables.events} (id, received_at, source, queue, name, parent_id, replay_of, trace_id, tasks, queues, message_ids, payload, raw, body_from_raw)
      SELECT x.id, x.r, x.s, x.q, x.n, x.p, x.o, x.t,
        coalesce(x.k::text[], ARRAY[x.k1]), coalesce(x.qs::text[], ARRAY[x.q1]), coalesce(x.ms::text[], ARRAY[x.m1]),
        x.payload::jsonb, decode(x.raw, 'base64'), x.b
      FROM (SELECT unnest($1::text[]) AS id, unnest($2::float8[]) AS r, unnest($3::text[]) AS s, unnest($4::text[]) AS q,
        unnest($5::text[]) AS n, unnest($6::text[]) AS p, unnest($7::text[]) AS o, unnest($8::text[]) AS t,
        unnest($9::text[]) AS k1, unnest($10::text[]) AS k, unnest($11::text[]) AS q1, unnest($12::text[]) AS qs,
        unnest($13::text[]) AS m1, unnest($14::text[]) AS ms,
        unnest(string_to_array($15::text, E'\\x1e', '-')) AS payload, unnest((string_to_array($16::text, E'\\x1e', '-'))[2:]) AS raw,
        unnest($17::boolean[]) AS b) AS x
      ${skipEvent}
    ), rn AS (
      INSERT INTO ${tables.runs} (event_id, task, attempt, started_at, duration_ms, outcome, status, error_type, error_message, error_stack, emitted)
      SELECT x.e, x.k, x.a, x.s, x.d, x.o, x.st, x.et, x.em, x.es, CASE WHEN x.x1 IS NULL THEN x.x::text[] ELSE ARRAY[x.x1] END
      FROM (SELECT unnest($18::text[]) AS e, unnest($19::text[]) AS k, unnest($20::integer[]) AS a, unnest($21::float8[]) AS s,
        unnest($22::float8[]) AS d, unnest($23::text[]) AS o, unnest($24::smallint[]) AS st, unnest($25::text[]) AS et,
        unnest($26::text[]) AS em, unnest($27::text[]) AS es, unnest($28::text[]) AS x1, unnest($29::text[]) AS x) AS x
      ${skipRun}
    )
    SELECT count(*) AS relaxed FROM relaxed`;
}
