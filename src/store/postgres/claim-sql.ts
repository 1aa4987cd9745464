/** Why the reaper gave a message back: kept as its last error, so a dead letter tells why attempts grew. */
export const LEASE_EXPIRED = "its claimer stopped renewing its lease (the process stopped or stalled)";

/**
 * Statement texts for claims and their leases. A claim sets `claimed_by` (the claiming
 * process's token) and `lease_until` (the database's clock); the claimer renews its leases
 * while its tasks run; a lease past its deadline is taken back by the reaper of any process,
 * with the attempt counted.
 */
export class ClaimSql {
  private readonly t: string;

  constructor(schema: string) {
    this.t = `"${schema}".messages`;
  }

  /**
   * Claims up to $2 messages of queue $1 for token $4, leased for $5 ms: due retries first
   * (by due time), then waiting messages in arrival order. `FOR UPDATE SKIP LOCKED`: processes
   * claiming at the same moment take different rows instead of waiting for each other. A message
   * is passed over while another message of its queue with the same id is claimed (its outcome
   * would be recorded against the wrong copy), and, with an ordering key, while an earlier
   * message with that key is still in the queue or one with that key is claimed. Of two
   * copies of one id in a batch only the first is taken. $3 is the claimer's clock (ms), for
   * the due times it gave.
   *
   * $6 false claims messages without an ordering key only: PostgreSQL plans an unnamed statement
   * with its parameters as constants, so the ordering-key checks are then left out before they
   * are planned (they were about half of the planning, which cost more than the run). Every
   * claim answers `keyed_waiting`, whether messages with a key wait in the queue, even when it
   * claimed nothing (one row, its message columns NULL): the claimer then claims with $6 true.
   */
  claim(): string {
    const t = this.t;
    const passable = `
      AND NOT EXISTS (SELECT 1 FROM ${t} c WHERE c.queue = m.queue AND c.id = m.id AND c.claimed_by IS NOT NULL)
      AND (m.ordering_key IS NULL OR ($6::boolean
        AND NOT EXISTS (SELECT 1 FROM ${t} e WHERE e.queue = m.queue AND e.ordering_key IS NOT NULL AND e.ordering_key = m.ordering_key AND e.seq < m.seq)
        AND NOT EXISTS (SELECT 1 FROM ${t} c WHERE c.queue = m.queue AND c.ordering_key IS NOT NULL AND c.ordering_key = m.ordering_key AND c.claimed_by IS NOT NULL)
      ))`;
    return `WITH due AS (
        SELECT m.seq, m.id, m.visible_at FROM ${t} m
        WHERE m.queue = $1 AND m.claimed_by IS NULL AND m.visible_at > 0 AND m.visible_at <= $3 ${passable}
        ORDER BY m.visible_at, m.seq LIMIT $2 FOR UPDATE SKIP LOCKED
      ),
      ready AS (
        SELECT m.seq, m.id, m.visible_at FROM ${t} m
        WHERE m.queue = $1 AND m.claimed_by IS NULL AND m.visible_at = 0 ${passable}
        ORDER BY m.seq LIMIT $2 FOR UPDATE SKIP LOCKED
      ),
      first_of_id AS (
        SELECT DISTINCT ON (id) seq, visible_at FROM (SELECT * FROM due UNION ALL SELECT * FROM ready) AS both_kinds
        ORDER BY id, seq
      ),
      chosen AS (
        SELECT seq FROM first_of_id ORDER BY visible_at = 0, visible_at, seq LIMIT $2
      ),
      claimed AS (
        UPDATE ${t} m SET claimed_by = $4, lease_until = now() + $5 * interval '1 millisecond'
        FROM chosen WHERE m.seq = chosen.seq
        RETURNING m.seq, m.id, m.payload, m.raw, m.attempts, m.enqueued_at, m.last_error, m.body_from_raw, m.ordering_key, m.trace_context, m.visible_at
      )
      SELECT claimed.*, keyed.waiting AS keyed_waiting
      FROM (SELECT EXISTS (SELECT 1 FROM ${t} k WHERE k.queue = $1 AND k.ordering_key IS NOT NULL AND k.claimed_by IS NULL) AS waiting) AS keyed
      LEFT JOIN claimed ON true`;
  }

  /** Renews the leases of seqs $1 held by token $2 for $3 ms more. */
  renew(): string {
    return `UPDATE ${this.t} SET lease_until = now() + $3 * interval '1 millisecond' WHERE seq = ANY($1::bigint[]) AND claimed_by = $2`;
  }

  /**
   * Takes back up to 1,000 leases past their deadline, counting the attempt, and wakes each
   * queue's consumers. Parameters: channel, token. Returns `queues`.
   */
  reap(): string {
    return this.giveBack(`SELECT seq FROM ${this.t} WHERE claimed_by IS NOT NULL AND lease_until < now() ORDER BY lease_until LIMIT 1000 FOR UPDATE SKIP LOCKED`);
  }

  /** What a closing process still holds ($3), given back as a lease expiry would: the attempt counted. */
  surrender(): string {
    return this.giveBack(`SELECT seq FROM ${this.t} WHERE seq = ANY($3::bigint[]) AND claimed_by = $2 FOR UPDATE`);
  }

  private giveBack(select: string): string {
    return `WITH expired AS (${select}),
      taken AS (
        UPDATE ${this.t} m SET claimed_by = NULL, lease_until = NULL, attempts = m.attempts + 1, last_error = '${LEASE_EXPIRED}'
        FROM expired WHERE m.seq = expired.seq RETURNING m.queue
      ),
      woke AS (SELECT pg_notify($1, $2 || chr(10) || queue) FROM (SELECT DISTINCT queue FROM taken) AS q)
      SELECT (SELECT coalesce(array_agg(DISTINCT queue), '{}') FROM taken) AS queues, (SELECT count(*) FROM taken)::int AS taken, (SELECT count(*) FROM woke) AS woke`;
  }
}
