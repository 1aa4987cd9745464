import { DEAD_LETTER_COLUMNS, MESSAGE_CASTS, MESSAGE_COLUMNS, type EncodedMessage } from "./message-rows";
import { rowBucket } from "./prepared-statements";

/** A VALUES list of `rows` rows of parameters (from $offset+1) cast as `casts`, each ended by its literal ordinal. */
function orderedValues(rows: number, casts: readonly string[], offset: number): string {
  const width = casts.length;
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const cells: string[] = [];
    for (let c = 0; c < width; c++) cells.push(`$${offset + r * width + c + 1}::${casts[c]}`);
    out.push(`(${cells.join(", ")}, ${r})`);
  }
  return out.join(", ");
}

/** Statement texts for the messages of one schema; parameters are numbered as each method documents. */
export class MessageSql {
  private readonly t: string;
  private readonly dead: string;

  constructor(schema: string) {
    this.t = `"${schema}".messages`;
    this.dead = `"${schema}".dead_letters`;
  }

  /**
   * One multi-row INSERT for a batch of new messages, in call order, plus one notification per
   * queue for the other processes: one statement, one commit. Parameters: the rows (padded with
   * all-NULL rows up to `rowBucket`, so that one statement text serves many batch sizes), then
   * the channel, the sender's token and the queues to notify.
   */
  insert(rows: readonly EncodedMessage[], channel: string, token: string, queues: readonly string[]): { text: string; values: unknown[] } {
    const values: unknown[] = [];
    for (const row of rows) values.push(...row.values);
    const bucket = rowBucket(rows.length);
    for (let i = rows.length * MESSAGE_COLUMNS.length; i < bucket * MESSAGE_COLUMNS.length; i++) values.push(null);
    const n = values.length;
    values.push(channel, token, queues);
    const columns = MESSAGE_COLUMNS.join(", ");
    const text = `WITH inserted AS (
        INSERT INTO ${this.t} (${columns})
        SELECT ${MESSAGE_COLUMNS.map((c) => `v.${c}`).join(", ")}
        FROM (VALUES ${orderedValues(bucket, MESSAGE_CASTS, 0)}) AS v(${columns}, ord)
        WHERE v.queue IS NOT NULL
        ORDER BY v.ord
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM inserted) AS inserted, pg_notify($${n + 1}, $${n + 2} || chr(10) || q) FROM unnest($${n + 3}::text[]) AS q`;
    return { text, values };
  }

  /**
   * Completions of a batch in one statement: deletes the claimed inputs (still this claimer's,
   * or given back by an expired lease and not claimed again), and inserts each emitted message
   * only when its input was deleted here (an input not held gives its emit unconditionally).
   * Returns `done`, the deleted sequence numbers.
   */
  complete(
    inputs: readonly number[],
    emits: ReadonlyArray<{ readonly inputSeq: number | null; readonly row: EncodedMessage }>,
    channel: string,
    token: string,
    queues: readonly string[],
  ): { text: string; values: unknown[] } {
    const values: unknown[] = [inputs, token, channel, queues];
    const done = `DELETE FROM ${this.t} WHERE seq = ANY($1::bigint[]) AND (claimed_by = $2 OR claimed_by IS NULL) RETURNING seq`;
    const notify = `SELECT pg_notify($3, $2 || chr(10) || q) FROM unnest($4::text[]) AS q`;
    if (emits.length === 0) {
      return { text: `WITH done AS (${done}), woke AS (${notify}) SELECT (SELECT coalesce(array_agg(seq), '{}') FROM done) AS done, (SELECT count(*) FROM woke) AS woke`, values };
    }
    const casts = ["bigint", ...MESSAGE_CASTS];
    for (const emit of emits) values.push(emit.inputSeq, ...emit.row.values);
    // Padded with all-NULL rows (queue NULL: left out) so that one text serves many batch sizes.
    const bucket = rowBucket(emits.length);
    for (let i = emits.length * casts.length; i < bucket * casts.length; i++) values.push(null);
    const columns = MESSAGE_COLUMNS.join(", ");
    const text = `WITH done AS (${done}),
      emitted AS (
        INSERT INTO ${this.t} (${columns})
        SELECT ${MESSAGE_COLUMNS.map((c) => `v.${c}`).join(", ")}
        FROM (VALUES ${orderedValues(bucket, casts, 4)}) AS v(input_seq, ${columns}, ord)
        WHERE v.queue IS NOT NULL AND (v.input_seq IS NULL OR v.input_seq IN (SELECT seq FROM done))
        ORDER BY v.ord
        RETURNING 1
      ),
      woke AS (${notify})
      SELECT (SELECT coalesce(array_agg(seq), '{}') FROM done) AS done, (SELECT count(*) FROM emitted) AS emitted, (SELECT count(*) FROM woke) AS woke`;
    return { text, values };
  }

  /**
   * A claimed message waits for a retry: its due time, attempts and error; its claim is dropped.
   * Parameters: seq, visibleAt, attempts, lastError, token, channel, whether to notify now.
   */
  retry(): string {
    return `WITH retried AS (
        UPDATE ${this.t} SET visible_at = $2, attempts = $3, last_error = $4, claimed_by = NULL, lease_until = NULL
        WHERE seq = $1 AND (claimed_by = $5 OR claimed_by IS NULL) RETURNING queue
      )
      SELECT (SELECT count(*) FROM retried) AS retried, pg_notify($6, $5 || chr(10) || queue) FROM retried WHERE $7::boolean`;
  }

  /** Claims given back untouched. Parameters: seqs, token, channel, queue. */
  release(): string {
    return `WITH released AS (
        UPDATE ${this.t} SET claimed_by = NULL, lease_until = NULL WHERE seq = ANY($1::bigint[]) AND claimed_by = $2 RETURNING 1
      )
      SELECT (SELECT count(*) FROM released) AS released, pg_notify($3, $2 || chr(10) || $4)`;
  }

  /**
   * Claims given back after their failure could not be recorded: the attempt still counts (as
   * a lease expiry counts it), so that a message whose outcome never writes still runs out of
   * attempts. Parameters: seq, token, channel, queue, attempts.
   */
  releaseCounted(): string {
    return `WITH released AS (
        UPDATE ${this.t} SET claimed_by = NULL, lease_until = NULL, attempts = GREATEST(attempts, $5::integer) WHERE seq = $1 AND claimed_by = $2 RETURNING 1
      )
      SELECT (SELECT count(*) FROM released) AS released, pg_notify($3, $2 || chr(10) || $4)`;
  }

  /**
   * Moves a claimed message to the dead letters, only if it is still this claimer's (or
   * unclaimed): one statement. Parameters: seq, token, channel, notify (boolean), then the
   * dead letter's columns.
   */
  deadLetterHeld(): string {
    const params = DEAD_LETTER_COLUMNS.map((_, i) => `$${i + 5}`).join(", ");
    return `WITH gone AS (DELETE FROM ${this.t} WHERE seq = $1 AND (claimed_by = $2 OR claimed_by IS NULL) RETURNING queue),
      kept AS (
        INSERT INTO ${this.dead} (${DEAD_LETTER_COLUMNS.join(", ")})
        SELECT ${params} WHERE EXISTS (SELECT 1 FROM gone)
        ${this.deadLetterConflict()}
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM kept) AS kept, pg_notify($3, $2 || chr(10) || queue) FROM gone WHERE $4::boolean`;
  }

  /** A dead letter for a message this process does not hold. Parameters: the dead letter's columns. */
  deadLetterOnly(): string {
    const params = DEAD_LETTER_COLUMNS.map((_, i) => `$${i + 1}`).join(", ");
    return `INSERT INTO ${this.dead} (${DEAD_LETTER_COLUMNS.join(", ")}) VALUES (${params}) ${this.deadLetterConflict()}`;
  }

  /** Dead letters are keyed by message id: a second death of the same id replaces the first. */
  private deadLetterConflict(): string {
    const rest = DEAD_LETTER_COLUMNS.filter((c) => c !== "id");
    return `ON CONFLICT (id) DO UPDATE SET ${rest.map((c) => `${c} = excluded.${c}`).join(", ")}`;
  }

  /** How many of the messages ($1 queues, $2 ids, pairwise) are in the table: whether an insert whose reply was lost committed. */
  present(): string {
    return `SELECT count(*) AS n FROM ${this.t} WHERE (queue, id) IN (SELECT * FROM unnest($1::text[], $2::text[]))`;
  }

  depth(): string {
    return `SELECT count(*) AS n FROM ${this.t} WHERE queue = $1`;
  }

  depths(): string {
    return `SELECT queue, count(*) AS n FROM ${this.t} GROUP BY queue`;
  }

  /**
   * Every queue with a message or a dead letter. Both tables have an index led by queue: a
   * recursive query hops from one queue to the next instead of reading a backlog's every row.
   */
  queueNames(): string {
    const distinct = (table: string, alias: string) => `SELECT queue FROM (WITH RECURSIVE n AS (
        (SELECT queue FROM ${table} ORDER BY queue LIMIT 1)
        UNION ALL
        SELECT (SELECT ${alias}.queue FROM ${table} ${alias} WHERE ${alias}.queue > n.queue ORDER BY ${alias}.queue LIMIT 1) FROM n WHERE n.queue IS NOT NULL
      ) SELECT queue FROM n WHERE queue IS NOT NULL) AS ${alias}_queues`;
    return `${distinct(this.t, "m")} UNION ${distinct(this.dead, "d")} ORDER BY queue`;
  }

  stats(): string {
    return `SELECT count(*) FILTER (WHERE claimed_by IS NULL) AS waiting,
        count(*) FILTER (WHERE claimed_by IS NOT NULL) AS in_flight,
        count(*) FILTER (WHERE claimed_by IS NULL AND visible_at > $2::bigint) AS delayed,
        min(enqueued_at) AS oldest,
        (SELECT count(*) FROM ${this.dead} WHERE queue = $1) AS dead
      FROM ${this.t} WHERE queue = $1`;
  }
}
