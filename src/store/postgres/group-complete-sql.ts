import { MESSAGE_CASTS, MESSAGE_COLUMNS, type EncodedMessage } from "./message-rows";

/**
 * The statement of a group's success, in one transaction: every claimed message of the group
 * leaves and the group's outputs arrive, or nothing happens. All or none: when one of the
 * group's rows was claimed again elsewhere (this claimer's lease had ended), that run covers
 * it, so this one deletes nothing and writes no output; the rows still free are claimed again
 * later rather than lost with an output withheld.
 */
export class GroupCompleteSql {
  private readonly t: string;

  constructor(schema: string) {
    this.t = `"${schema}".messages`;
  }

  /**
   * Parameters: the group's seqs, token, channel, queues to wake, then the outputs' columns.
   * Returns `done` (whether the group left) and `emitted`.
   */
  complete(seqs: readonly number[], emits: readonly EncodedMessage[], token: string, channel: string, queues: readonly string[]): { text: string; values: unknown[] } {
    const values: unknown[] = [seqs, token, channel, queues];
    for (const emit of emits) values.push(...emit.values);
    const columns = MESSAGE_COLUMNS.join(", ");
    // Rows locked first: a reaper or claimer acting at the same moment is waited for, and seen.
    const head = `WITH mine AS (
        SELECT seq FROM ${this.t} WHERE seq = ANY($1::bigint[]) AND (claimed_by = $2 OR claimed_by IS NULL) FOR UPDATE
      ),
      whole AS (SELECT count(*) = cardinality($1::bigint[]) AS ok FROM mine),
      done AS (DELETE FROM ${this.t} m USING mine WHERE m.seq = mine.seq AND (SELECT ok FROM whole) RETURNING m.seq),
      woke AS (SELECT pg_notify($3, $2 || chr(10) || q) FROM unnest($4::text[]) AS q WHERE (SELECT ok FROM whole))`;
    if (emits.length === 0) {
      return { text: `${head} SELECT (SELECT ok FROM whole) AS done, 0 AS emitted, (SELECT count(*) FROM done) AS deleted, (SELECT count(*) FROM woke) AS woke`, values };
    }
    const text = `${head},
      emitted AS (
        INSERT INTO ${this.t} (${columns})
        SELECT ${MESSAGE_COLUMNS.map((c) => `v.${c}`).join(", ")}
        FROM (VALUES ${numbered(emits.length)}) AS v(${columns}, ord)
        WHERE (SELECT ok FROM whole)
        ORDER BY v.ord
        RETURNING 1
      )
      SELECT (SELECT ok FROM whole) AS done, (SELECT count(*) FROM emitted) AS emitted, (SELECT count(*) FROM done) AS deleted, (SELECT count(*) FROM woke) AS woke`;
    return { text, values };
  }
}

/** A VALUES list of `rows` outputs (parameters from $5), each ended by its ordinal: inserted in the task's order. */
function numbered(rows: number): string {
  const width = MESSAGE_CASTS.length;
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const cells = MESSAGE_CASTS.map((cast, c) => `$${4 + r * width + c + 1}::${cast}`);
    out.push(`(${cells.join(", ")}, ${r})`);
  }
  return out.join(", ");
}
