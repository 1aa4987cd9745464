/*
 * Migration 7: the limited claim (flow-claim-sql.ts) as of this version. Two changes to the
 * function of migration 3, which counted and handed out messages by a concurrency key that may
 * be NULL:
 *
 * - A message without a concurrency key (queued before the task had `concurrency`, or replayed
 *   from a dead letter of then) is in the task's shared group '', as on the other engines. The
 *   old count compared NULL keys, matched none, and such messages ran past the limit. A claimed
 *   message gets '' written as its key, so that the count of a group's runs stays one probe of
 *   the index on (queue, concurrency_key).
 * - The claimed messages carry their concurrency and rate keys back to the claimer: a retry, a
 *   dead letter and its replay then stay in their groups (a dead letter kept none, and its replay
 *   ran beside the runs of its key).
 *
 * Its return type changes: dropped and created again, then planned per call as migration 6 set.
 */

/** One branch of the claim's candidates (see flow-claim-sql.ts): due retries by time, or the rest by arrival. */
function candidates(visible: string, order: string): string {
  return `      (SELECT m.seq, m.id, m.visible_at, coalesce(m.concurrency_key, '') AS ck, coalesce(m.rate_key, '') AS rk, u.c_used, u.r_used
        FROM $schema.messages m
        CROSS JOIN LATERAL (SELECT
          CASE WHEN p_concurrency IS NULL THEN 0 ELSE (SELECT count(*) FROM $schema.messages c WHERE c.queue = m.queue AND c.concurrency_key = coalesce(m.concurrency_key, '') AND c.claimed_by IS NOT NULL) END AS c_used,
          CASE WHEN p_rate IS NULL THEN 0 ELSE (SELECT count(*) FROM $schema.rate_starts r WHERE r.queue = m.queue AND r.rate_key = coalesce(m.rate_key, '')) END AS r_used
        ) u
        WHERE m.queue = p_queue AND m.claimed_by IS NULL AND ${visible}
          AND (p_concurrency IS NULL OR u.c_used < p_concurrency)
          AND (p_rate IS NULL OR u.r_used < p_rate)
          AND NOT EXISTS (SELECT 1 FROM $schema.messages d WHERE d.queue = m.queue AND d.id = m.id AND d.claimed_by IS NOT NULL)
          AND (m.ordering_key IS NULL OR (
            NOT EXISTS (SELECT 1 FROM $schema.messages e WHERE e.queue = m.queue AND e.ordering_key IS NOT NULL AND e.ordering_key = m.ordering_key AND e.seq < m.seq)
            AND NOT EXISTS (SELECT 1 FROM $schema.messages o WHERE o.queue = m.queue AND o.ordering_key IS NOT NULL AND o.ordering_key = m.ordering_key AND o.claimed_by IS NOT NULL)))
        ORDER BY ${order} LIMIT p_limit * 4 + 16)`;
}

export const CLAIM_KEYS_MIGRATION = `
  DROP FUNCTION $schema.claim_limited(text, integer, bigint, text, integer, integer, integer, integer);
  CREATE FUNCTION $schema.claim_limited(
    p_queue text, p_limit integer, p_now bigint, p_token text, p_lease_ms integer,
    p_concurrency integer, p_rate integer, p_period_ms integer
  ) RETURNS TABLE (
    seq bigint, id text, payload bytea, raw bytea, attempts integer, enqueued_at double precision,
    last_error text, body_from_raw boolean, ordering_key text, trace_context jsonb, visible_at bigint,
    concurrency_key text, rate_key text, rate_wait_ms bigint
  ) LANGUAGE plpgsql VOLATILE AS $body$
  #variable_conflict use_column
  DECLARE
    v_now timestamptz;
    v_period interval := coalesce(p_period_ms, 0) * interval '1 millisecond';
    v_first timestamptz;
  BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
      RAISE EXCEPTION 'webhook-tasks: flow limits need READ COMMITTED transactions, the server default; this session uses %', current_setting('transaction_isolation');
    END IF;
    -- One claimer of this queue at a time; statements below see every claim committed before.
    PERFORM pg_advisory_xact_lock(hashtext('webhook-tasks flow'), hashtext('$schema' || chr(10) || p_queue));
    v_now := clock_timestamp();
    IF p_rate IS NOT NULL THEN
      DELETE FROM $schema.rate_starts r WHERE r.queue = p_queue AND r.started_at <= v_now - v_period;
    END IF;
    RETURN QUERY
    WITH candidates AS (
${candidates("m.visible_at > 0 AND m.visible_at <= p_now", "m.visible_at, m.seq")}
      UNION ALL
${candidates("m.visible_at = 0", "m.seq")}
    ),
    first_of_id AS (
      SELECT DISTINCT ON (f.id) f.* FROM candidates f ORDER BY f.id, f.seq
    ),
    ranked AS (
      SELECT f.*,
        row_number() OVER (PARTITION BY f.ck ORDER BY f.visible_at = 0, f.visible_at, f.seq) AS c_rank,
        row_number() OVER (PARTITION BY f.rk ORDER BY f.visible_at = 0, f.visible_at, f.seq) AS r_rank
      FROM first_of_id f
    ),
    chosen AS (
      SELECT r.seq FROM ranked r
      WHERE (p_concurrency IS NULL OR r.c_used + r.c_rank <= p_concurrency)
        AND (p_rate IS NULL OR r.r_used + r.r_rank <= p_rate)
      ORDER BY r.visible_at = 0, r.visible_at, r.seq LIMIT p_limit
    ),
    claimed AS (
      UPDATE $schema.messages m SET claimed_by = p_token, lease_until = now() + p_lease_ms * interval '1 millisecond',
        concurrency_key = CASE WHEN p_concurrency IS NULL THEN m.concurrency_key ELSE coalesce(m.concurrency_key, '') END
      FROM chosen WHERE m.seq = chosen.seq AND m.claimed_by IS NULL
      RETURNING m.seq, m.id, m.payload, m.raw, m.attempts, m.enqueued_at, m.last_error, m.body_from_raw, m.ordering_key, m.trace_context, m.visible_at, m.concurrency_key, m.rate_key
    ),
    started AS (
      INSERT INTO $schema.rate_starts (queue, rate_key, started_at)
      SELECT p_queue, coalesce(c.rate_key, ''), v_now FROM claimed c WHERE p_rate IS NOT NULL
    )
    SELECT c.seq, c.id, c.payload, c.raw, c.attempts, c.enqueued_at, c.last_error, c.body_from_raw, c.ordering_key, c.trace_context, c.visible_at, c.concurrency_key, c.rate_key, NULL::bigint
    FROM claimed c;
    -- A key at its rate: one more row, without a message, saying when its window has room again.
    IF p_rate IS NOT NULL THEN
      SELECT min(w.first) INTO v_first FROM (
        SELECT min(r.started_at) AS first FROM $schema.rate_starts r WHERE r.queue = p_queue GROUP BY r.rate_key HAVING count(*) >= p_rate
      ) w;
      IF v_first IS NOT NULL THEN
        RETURN QUERY SELECT NULL::bigint, NULL::text, NULL::bytea, NULL::bytea, NULL::integer, NULL::double precision, NULL::text, NULL::boolean, NULL::text, NULL::jsonb, NULL::bigint, NULL::text, NULL::text,
          greatest(1, ceil(extract(epoch FROM (v_first + v_period - clock_timestamp())) * 1000))::bigint;
      END IF;
    END IF;
  END
  $body$;
  ALTER FUNCTION $schema.claim_limited(text, integer, bigint, text, integer, integer, integer, integer)
    SET plan_cache_mode = force_custom_plan;
`;
