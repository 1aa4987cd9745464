/*
 * Claims under flow limits (TaskOptions.concurrency { limit, key }, rateLimit), across every
 * replica sharing the schema.
 *
 * Why a lock, and not counting in the claim statement alone: two replicas claiming at the same
 * moment each read the claimed rows as of their own snapshot, and neither sees the other's
 * claim before it commits; both would see one run of key k and both take one more (3 for a
 * limit of 2). Ordering keys escape this because only the head row of a key is ever claimable
 * and a row lock decides who takes it; with a limit above one there is no such single row.
 * So each claim of a limited queue first takes a transaction-level advisory lock on the queue:
 * claimers of that queue go one at a time, and the next one counts after the previous one
 * committed (the lock is released only after the commit is visible). Inside a VOLATILE
 * PL/pgSQL function each statement takes a fresh snapshot under READ COMMITTED, so the count
 * taken after the lock sees every committed claim: the limit is exact, in one round trip.
 *
 * Only increases need the lock: a completion, a retry, a release or the reaper taking back an
 * expired lease only lower the counts. A slot held by a replica that was SIGKILLed is a
 * claimed row with a lease; when the lease ends, the reaper of any replica takes it back and
 * the slot is free. Rate limits count starts in `rate_starts` (one row per claim, by the
 * database's clock) over the sliding window of `periodMs`, pruned as it moves.
 */

/**
 * One branch of the limited claim's candidates: messages of the queue matching `visible`, in
 * `order` (each branch follows an index of its own: due retries and delays by time, the rest by
 * arrival), with their group's runs and their rate group's starts in the window, full groups and
 * ordering keys behind an earlier message passed over.
 */
function candidates(visible: string, order: string): string {
  return `      (SELECT m.seq, m.id, m.visible_at, coalesce(m.concurrency_key, '') AS ck, coalesce(m.rate_key, '') AS rk, u.c_used, u.r_used
        FROM $schema.messages m
        CROSS JOIN LATERAL (SELECT
          -- Runs of its group now, and starts of its rate group in the window: one index probe
          -- each per row scanned, so rows of full groups are passed over cheaply.
          CASE WHEN p_concurrency IS NULL THEN 0 ELSE (SELECT count(*) FROM $schema.messages c WHERE c.queue = m.queue AND c.concurrency_key = m.concurrency_key AND c.claimed_by IS NOT NULL) END AS c_used,
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

/** The schema's flow objects (migration 3; its claim function is replaced by migration 7, claim-keys-migration.ts). `$schema` stands for the quoted schema name. */
export const FLOW_MIGRATION = `
  ALTER TABLE $schema.messages ADD COLUMN concurrency_key text, ADD COLUMN rate_key text;
  ALTER TABLE $schema.dead_letters ADD COLUMN concurrency_key text, ADD COLUMN rate_key text;
  CREATE TABLE $schema.rate_starts (
    queue text NOT NULL,
    rate_key text NOT NULL,
    started_at timestamptz NOT NULL
  );
  CREATE INDEX rate_starts_window ON $schema.rate_starts (queue, rate_key, started_at);
  -- The runs of a concurrency group: what a limited claim counts per candidate.
  CREATE INDEX messages_claimed_groups ON $schema.messages (queue, concurrency_key) WHERE claimed_by IS NOT NULL AND concurrency_key IS NOT NULL;

  CREATE FUNCTION $schema.claim_limited(
    p_queue text, p_limit integer, p_now bigint, p_token text, p_lease_ms integer,
    p_concurrency integer, p_rate integer, p_period_ms integer
  ) RETURNS TABLE (
    seq bigint, id text, payload bytea, raw bytea, attempts integer, enqueued_at double precision,
    last_error text, body_from_raw boolean, ordering_key text, trace_context jsonb, visible_at bigint,
    rate_wait_ms bigint
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
      UPDATE $schema.messages m SET claimed_by = p_token, lease_until = now() + p_lease_ms * interval '1 millisecond'
      FROM chosen WHERE m.seq = chosen.seq AND m.claimed_by IS NULL
      RETURNING m.seq, m.id, m.payload, m.raw, m.attempts, m.enqueued_at, m.last_error, m.body_from_raw, m.ordering_key, m.trace_context, m.visible_at, m.rate_key
    ),
    started AS (
      INSERT INTO $schema.rate_starts (queue, rate_key, started_at)
      SELECT p_queue, coalesce(c.rate_key, ''), v_now FROM claimed c WHERE p_rate IS NOT NULL
    )
    SELECT c.seq, c.id, c.payload, c.raw, c.attempts, c.enqueued_at, c.last_error, c.body_from_raw, c.ordering_key, c.trace_context, c.visible_at, NULL::bigint
    FROM claimed c;
    -- A key at its rate: one more row, without a message, saying when its window has room again.
    IF p_rate IS NOT NULL THEN
      SELECT min(w.first) INTO v_first FROM (
        SELECT min(r.started_at) AS first FROM $schema.rate_starts r WHERE r.queue = p_queue GROUP BY r.rate_key HAVING count(*) >= p_rate
      ) w;
      IF v_first IS NOT NULL THEN
        RETURN QUERY SELECT NULL::bigint, NULL::text, NULL::bytea, NULL::bytea, NULL::integer, NULL::double precision, NULL::text, NULL::boolean, NULL::text, NULL::jsonb, NULL::bigint,
          greatest(1, ceil(extract(epoch FROM (v_first + v_period - clock_timestamp())) * 1000))::bigint;
      END IF;
    END IF;
  END
  $body$;
`;

/** Statement texts for limited claims of one schema. */
export class FlowClaimSql {
  private readonly t: string;
  private readonly fn: string;
  private readonly starts: string;

  constructor(schema: string) {
    this.t = `"${schema}".messages`;
    this.fn = `"${schema}".claim_limited`;
    this.starts = `"${schema}".rate_starts`;
  }

  /**
   * Parameters: queue, limit, claimer's clock (ms), token, lease (ms), concurrency per key (or
   * NULL), rate limit (or NULL), rate period (ms, or NULL). Rows with a NULL seq carry
   * `rate_wait_ms` only.
   */
  claim(): string {
    return `SELECT * FROM ${this.fn}($1, $2, $3, $4, $5, $6, $7, $8)`;
  }

  /**
   * Waiting messages that are due and held back by a full group: its concurrency key at its
   * limit, or its rate key at its rate. Parameters: queue, claimer's clock (ms), concurrency
   * (or NULL), rate limit (or NULL), rate period (ms, or NULL).
   */
  limited(): string {
    return `WITH running AS (
        SELECT coalesce(concurrency_key, '') AS k, count(*) AS n FROM ${this.t}
        WHERE $3::integer IS NOT NULL AND queue = $1 AND claimed_by IS NOT NULL GROUP BY 1
      ),
      recent AS (
        SELECT rate_key AS k, count(*) AS n FROM ${this.starts}
        WHERE $4::integer IS NOT NULL AND queue = $1 AND started_at > clock_timestamp() - $5::integer * interval '1 millisecond' GROUP BY 1
      )
      SELECT count(*) AS n FROM ${this.t} m
      LEFT JOIN running ru ON ru.k = coalesce(m.concurrency_key, '')
      LEFT JOIN recent re ON re.k = coalesce(m.rate_key, '')
      WHERE m.queue = $1 AND m.claimed_by IS NULL AND m.visible_at <= $2::bigint
        AND (coalesce(ru.n, 0) >= $3::integer OR coalesce(re.n, 0) >= $4::integer)`;
  }
}
