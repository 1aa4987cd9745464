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
  -- A key's messages, read when its group is handed out.
  CREATE INDEX messages_groups ON $schema.messages (queue, group_key, seq) WHERE group_key IS NOT NULL;

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
    WITH keys AS (
      -- Each key's visible messages, counted in one pass without a sort. A message without a
      -- key (queued before the task was debounced or batched) belongs to the task's group ''.
      -- None while a copy of its id is claimed: the claimer names its messages by id.
      SELECT coalesce(m.group_key, '') AS gk, count(*) AS n, min(m.enqueued_at) AS oldest, max(m.enqueued_at) AS newest, min(m.seq) AS first_seq
      FROM $schema.messages m
      WHERE m.queue = p_queue AND m.claimed_by IS NULL AND m.visible_at <= p_now
        AND NOT EXISTS (SELECT 1 FROM $schema.messages d WHERE d.queue = m.queue AND d.id = m.id AND d.claimed_by IS NOT NULL)
      GROUP BY 1
    ),
    busy AS (
      -- Keys being run: a debounce key is handed out again only once none of its messages is
      -- claimed, or waits for a retry (so a retried burst runs with what arrived meanwhile, its
      -- newest event last). A delayed emit (attempts 0) does not hold the key.
      SELECT DISTINCT coalesce(b.group_key, '') AS gk FROM $schema.messages b
      WHERE p_debounce AND b.queue = p_queue
        AND (b.claimed_by IS NOT NULL OR (b.visible_at > p_now AND b.attempts > 0))
    ),
    timed AS (
      -- A key's groups: chunk 0 its oldest maxSize messages (by enqueued_at), chunk 1 the next
      -- ones...; chunk -1 stands for messages this claim cannot hand out. A NULL due_at: none known.
      SELECT k.gk, k.oldest, k.first_seq, k.n / p_max_size AS full_groups, g.chunk, g.n, g.due_at, g.blocked
      FROM keys k
      CROSS JOIN LATERAL (
        -- Debounce: one group, due periodMs after the key's newest, maxWaitMs after its oldest
        -- (least() passes over a NULL), at once when it holds maxSize; the rest waits for it.
        SELECT 0::bigint AS chunk, least(k.n, p_max_size) AS n,
          least(k.newest + p_period_ms, k.oldest + p_max_wait_ms, CASE WHEN k.n >= p_max_size THEN p_now END) AS due_at,
          EXISTS (SELECT 1 FROM busy WHERE busy.gk = k.gk) AS blocked
        WHERE p_debounce
        UNION ALL
        SELECT -1, k.n - p_max_size, NULL, true WHERE p_debounce AND k.n > p_max_size
        UNION ALL
        -- Batch: full groups are due now (no more than one claim hands out)...
        SELECT s.chunk, p_max_size, p_now::double precision, false
        FROM generate_series(0, least(k.n / p_max_size, p_limit) - 1) AS s(chunk) WHERE NOT p_debounce
        UNION ALL
        -- ...those past the limit too...
        SELECT -1, (k.n / p_max_size - p_limit) * p_max_size, p_now::double precision, false
        WHERE NOT p_debounce AND k.n / p_max_size > p_limit
        UNION ALL
        -- ...and the rest: alone, a group due maxWaitMs after its oldest; behind full groups, its
        -- oldest is known once this claim has read past them (see tails).
        SELECT CASE WHEN k.n < p_max_size THEN 0 ELSE -1 END, k.n % p_max_size,
          CASE WHEN k.n < p_max_size THEN k.oldest + p_max_wait_ms END, false
        WHERE NOT p_debounce AND k.n % p_max_size > 0
      ) AS g
    ),
    chosen AS (
      -- Groups of the oldest messages first (a key's later groups ranked by the key's oldest).
      SELECT t.gk, t.chunk, row_number() OVER (ORDER BY t.oldest, t.first_seq, t.chunk) AS group_no
      FROM timed t WHERE t.chunk >= 0 AND NOT t.blocked AND t.due_at <= p_now
      ORDER BY t.oldest, t.first_seq, t.chunk LIMIT p_limit
    ),
    read AS (
      -- The chosen keys' visible messages, oldest first, cut in chunks of maxSize.
      SELECT ck.gk, ck.last, r.seq, r.id, r.enq, (row_number() OVER (PARTITION BY ck.gk ORDER BY r.enq, r.seq) - 1) / p_max_size AS chunk
      FROM (SELECT ch.gk, max(ch.chunk) AS last FROM chosen ch GROUP BY ch.gk) AS ck
      CROSS JOIN LATERAL (
        SELECT m.seq, m.id, m.enqueued_at AS enq FROM $schema.messages m
        WHERE m.queue = p_queue AND m.group_key = ck.gk AND m.claimed_by IS NULL AND m.visible_at <= p_now
          AND NOT EXISTS (SELECT 1 FROM $schema.messages d WHERE d.queue = m.queue AND d.id = m.id AND d.claimed_by IS NOT NULL)
        UNION ALL
        SELECT m.seq, m.id, m.enqueued_at FROM $schema.messages m
        WHERE ck.gk = '' AND m.queue = p_queue AND m.group_key IS NULL AND m.claimed_by IS NULL AND m.visible_at <= p_now
          AND NOT EXISTS (SELECT 1 FROM $schema.messages d WHERE d.queue = m.queue AND d.id = m.id AND d.claimed_by IS NOT NULL)
      ) AS r
    ),
    tails AS (
      -- A batch's rest right behind the last group handed out: its oldest, for its due time.
      SELECT r.gk, r.last, min(r.enq) AS oldest FROM read r WHERE NOT p_debounce AND r.chunk = r.last + 1 GROUP BY r.gk, r.last
    ),
    claimed AS (
      UPDATE $schema.messages m SET claimed_by = p_token, lease_until = now() + p_lease_ms * interval '1 millisecond'
      FROM (
        -- Of two copies of one id in the chosen groups only the first goes; the other waits.
        SELECT DISTINCT ON (r.id) r.seq, c.group_no FROM read r JOIN chosen c ON c.gk = r.gk AND c.chunk = r.chunk ORDER BY r.id, r.seq
      ) AS c
      WHERE m.seq = c.seq AND m.claimed_by IS NULL
      RETURNING m.seq, m.id, m.payload, m.raw, m.attempts, m.enqueued_at, m.last_error, m.body_from_raw, m.ordering_key,
        m.trace_context, m.visible_at, m.concurrency_key, m.rate_key, m.group_key, c.group_no
    ),
    left_over AS (
      -- Every visible message not handed out is collecting; a key being run has no due time of
      -- its own (its completion wakes the claimers).
      SELECT min(u.due_at) FILTER (WHERE NOT u.blocked) AS next_due_at, coalesce(sum(u.n), 0)::bigint AS collecting
      FROM (
        SELECT t.n, t.blocked,
          CASE WHEN t.chunk = -1 AND NOT p_debounce AND t.n < p_max_size AND tl.last + 1 = t.full_groups THEN tl.oldest + p_max_wait_ms ELSE t.due_at END AS due_at
        FROM timed t LEFT JOIN tails tl ON tl.gk = t.gk
        WHERE NOT EXISTS (SELECT 1 FROM chosen c WHERE c.gk = t.gk AND c.chunk = t.chunk)
      ) AS u
    )
    SELECT c.seq, c.id, c.payload, c.raw, c.attempts, c.enqueued_at, c.last_error, c.body_from_raw, c.ordering_key,
      c.trace_context, c.visible_at, c.concurrency_key, c.rate_key, c.group_key, c.group_no, NULL::double precision, NULL::bigint
    FROM claimed c
    UNION ALL
    -- One row without a message: when to claim again, and how many wait.
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
