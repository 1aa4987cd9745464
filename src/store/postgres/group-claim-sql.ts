/*
 * Claims of debounced and batched groups (GroupRule), across every replica sharing the schema.
 *
 * The events of a group that is still collecting stay in `messages` like any waiting message;
 * only the decision "this group is due" is taken at claim time. It is taken under the same
 * transaction advisory lock that limited claims take for the queue (flow-claim-sql.ts), so
 * claimers of a queue decide one at a time, each seeing every claim committed before it: one
 * group goes to one replica, and a debounce key that is being run is seen as such. The claimed
 * rows get `claimed_by` and a lease as any claim, so a replica that dies frees its groups when
 * its leases end, and a restart forgets nothing that was collecting.
 */

/** The schema's group objects (migration 4). `$schema` stands for the quoted schema name. */
export const GROUP_MIGRATION = `
  ALTER TABLE $schema.messages ADD COLUMN group_key text;
  ALTER TABLE $schema.dead_letters ADD COLUMN group_key text;
  -- A queue's grouped messages by key in arrival order: what a group claim reads.
  CREATE INDEX messages_groups ON $schema.messages (queue, group_key, seq) WHERE group_key IS NOT NULL;
  -- Keys being run: a debounce key is handed out again only once none of its messages is claimed.
  CREATE INDEX messages_claimed_groups_keys ON $schema.messages (queue, group_key) WHERE claimed_by IS NOT NULL AND group_key IS NOT NULL;

  CREATE FUNCTION $schema.claim_groups(
    p_queue text, p_debounce boolean, p_period_ms double precision, p_max_wait_ms double precision,
    p_max_size integer, p_limit integer, p_now bigint, p_token text, p_lease_ms integer
  ) RETURNS TABLE (
    seq bigint, id text, payload bytea, raw bytea, attempts integer, enqueued_at double precision,
    last_error text, body_from_raw boolean, ordering_key text, trace_context jsonb, visible_at bigint,
    concurrency_key text, rate_key text, group_key text, group_no bigint,
    next_due_at double precision, collecting bigint
  ) LANGUAGE plpgsql VOLATILE AS $body$
  #variable_conflict use_column
  BEGIN
    IF current_setting('transaction_isolation') <> 'read committed' THEN
      RAISE EXCEPTION 'webhook-tasks: debounced and batched tasks need READ COMMITTED transactions, the server default; this session uses %', current_setting('transaction_isolation');
    END IF;
    -- The lock of claim_limited: one claimer of this queue at a time, seeing every claim committed before.
    PERFORM pg_advisory_xact_lock(hashtext('webhook-tasks flow'), hashtext('$schema' || chr(10) || p_queue));
    RETURN QUERY
    WITH visible AS (
      -- Of two copies of one id only the first counts, and none while a copy is claimed: the
      -- claimer names its messages by id.
      SELECT DISTINCT ON (m.id) m.seq, m.id, m.group_key AS gk, m.enqueued_at AS enq
      FROM $schema.messages m
      WHERE m.queue = p_queue AND m.group_key IS NOT NULL AND m.claimed_by IS NULL AND m.visible_at <= p_now
        AND NOT EXISTS (SELECT 1 FROM $schema.messages d WHERE d.queue = m.queue AND d.id = m.id AND d.claimed_by IS NOT NULL)
      ORDER BY m.id, m.seq
    ),
    ranked AS (
      -- Chunks of maxSize per key in arrival order: a batch key's groups; a debounce key's
      -- group is its first chunk, the rest waits for it to finish.
      SELECT v.seq, v.gk, v.enq,
        (row_number() OVER (PARTITION BY v.gk ORDER BY v.seq) - 1) / p_max_size AS chunk,
        max(v.enq) OVER (PARTITION BY v.gk) AS newest
      FROM visible v
    ),
    busy AS (
      SELECT DISTINCT b.group_key AS gk FROM $schema.messages b
      WHERE p_debounce AND b.queue = p_queue AND b.group_key IS NOT NULL AND b.claimed_by IS NOT NULL
    ),
    grouped AS (
      SELECT r.gk, r.chunk, min(r.seq) AS first_seq, count(*) AS n, min(r.enq) AS oldest, max(r.newest) AS newest,
        p_debounce AND (r.chunk > 0 OR EXISTS (SELECT 1 FROM busy WHERE busy.gk = r.gk)) AS blocked
      FROM ranked r GROUP BY r.gk, r.chunk
    ),
    timed AS (
      SELECT g.*, CASE
          -- least() passes over a NULL maxWaitMs.
          WHEN p_debounce THEN least(g.newest + p_period_ms, g.oldest + p_max_wait_ms)
          WHEN g.n >= p_max_size THEN p_now::double precision
          ELSE g.oldest + p_max_wait_ms
        END AS due_at
      FROM grouped g
    ),
    chosen AS (
      SELECT t.gk, t.chunk, row_number() OVER (ORDER BY t.first_seq) AS group_no
      FROM timed t WHERE NOT t.blocked AND t.due_at <= p_now
      ORDER BY t.first_seq LIMIT p_limit
    ),
    claimed AS (
      UPDATE $schema.messages m SET claimed_by = p_token, lease_until = now() + p_lease_ms * interval '1 millisecond'
      FROM ranked r JOIN chosen c ON c.gk = r.gk AND c.chunk = r.chunk
      WHERE m.seq = r.seq AND m.claimed_by IS NULL
      RETURNING m.seq, m.id, m.payload, m.raw, m.attempts, m.enqueued_at, m.last_error, m.body_from_raw, m.ordering_key,
        m.trace_context, m.visible_at, m.concurrency_key, m.rate_key, m.group_key, c.group_no
    ),
    left_over AS (
      -- A key being run has no due time of its own: its completion wakes the claimers.
      SELECT min(t.due_at) FILTER (WHERE NOT t.blocked) AS next_due_at,
        coalesce(sum(t.n) FILTER (WHERE t.blocked OR t.due_at > p_now), 0)::bigint AS collecting
      FROM timed t WHERE NOT EXISTS (SELECT 1 FROM chosen c WHERE c.gk = t.gk AND c.chunk = t.chunk)
    )
    SELECT c.seq, c.id, c.payload, c.raw, c.attempts, c.enqueued_at, c.last_error, c.body_from_raw, c.ordering_key,
      c.trace_context, c.visible_at, c.concurrency_key, c.rate_key, c.group_key, c.group_no, NULL::double precision, NULL::bigint
    FROM claimed c
    UNION ALL
    -- One row without a message: when to claim again, and how many wait in groups not due.
    SELECT NULL::bigint, NULL::text, NULL::bytea, NULL::bytea, NULL::integer, NULL::double precision, NULL::text, NULL::boolean,
      NULL::text, NULL::jsonb, NULL::bigint, NULL::text, NULL::text, NULL::text, NULL::bigint, l.next_due_at, l.collecting
    FROM left_over l;
  END
  $body$;
`;

/** Statement texts for group claims of one schema. */
export class GroupClaimSql {
  private readonly fn: string;

  constructor(schema: string) {
    this.fn = `"${schema}".claim_groups`;
  }

  /**
   * Parameters: queue, debounce (boolean), periodMs (or NULL), maxWaitMs (or NULL), maxSize,
   * groups at most, claimer's clock (ms), token, lease (ms). Message rows carry `group_no`
   * (1 = oldest group); one row with a NULL seq carries `next_due_at` and `collecting`.
   */
  claim(): string {
    return `SELECT * FROM ${this.fn}($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
  }
}
