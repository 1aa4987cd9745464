import type { DeadLetter, DeadLetterStore } from "../store";
import { decodeDeadLetter, encodeMessage, MESSAGE_CASTS, MESSAGE_COLUMNS, valuesList } from "./message-rows";
import type { RunQuery } from "./postgres-state";

export interface DeadLetterHost {
  readonly run: RunQuery;
  readonly schema: string;
  readonly channel: string;
  readonly token: string;
  /** A replayed message is in `queue` now: count it and wake this process's consumers. */
  readonly replayed: (queue: string) => void;
}

/** Dead letters in their own table, keyed by message id; few by nature. */
export class PostgresDeadLetters implements DeadLetterStore {
  private readonly table: string;
  private readonly messages: string;

  constructor(private readonly host: DeadLetterHost) {
    this.table = `"${host.schema}".dead_letters`;
    this.messages = `"${host.schema}".messages`;
  }

  async list(queue?: string): Promise<DeadLetter[]> {
    const { rows } =
      queue === undefined
        ? await this.host.run(`SELECT * FROM ${this.table} ORDER BY died_at, id`, [])
        : await this.host.run(`SELECT * FROM ${this.table} WHERE queue = $1 ORDER BY died_at, id`, [queue]);
    return rows.map(decodeDeadLetter);
  }

  async get(id: string): Promise<DeadLetter | undefined> {
    // No message id stored holds U+0000 (see encodeMessage), and the database refuses it in a parameter.
    if (id.includes("\u0000")) return undefined;
    const { rows } = await this.host.run(`SELECT * FROM ${this.table} WHERE id = $1`, [id]);
    return rows.length === 0 ? undefined : decodeDeadLetter(rows[0]);
  }

  /**
   * Puts the letter's message back at the end of its queue with a fresh start (no attempts, no
   * error), as a new arrival. The letter is read first (its payload is stored again without
   * the body that the raw bytes give), then deleted and requeued in one statement that only
   * requeues if it deleted the very letter read: two replays at once requeue it once.
   */
  async replay(id: string): Promise<boolean> {
    const letter = await this.get(id);
    if (!letter) return false;
    const { message } = letter;
    const row = encodeMessage(letter.queue, { ...message, attempts: 0, lastError: undefined });
    const { host } = this;
    const n = MESSAGE_COLUMNS.length;
    const { rows } = await host.run(
      `WITH gone AS (DELETE FROM ${this.table} WHERE id = $${n + 1} AND died_at = $${n + 2} AND queue = $${n + 3} RETURNING 1),
        requeued AS (
          INSERT INTO ${this.messages} (${MESSAGE_COLUMNS.join(", ")})
          SELECT * FROM (VALUES ${valuesList(1, MESSAGE_CASTS)}) AS v WHERE EXISTS (SELECT 1 FROM gone)
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM requeued) AS requeued, pg_notify($${n + 4}, $${n + 5} || chr(10) || $${n + 3}::text) FROM requeued`,
      [...row.values, id, letter.diedAt, letter.queue, host.channel, host.token],
    );
    if (rows.length === 0) return false;
    host.replayed(letter.queue);
    return true;
  }

  async purge(filter: { id?: string; queue?: string } = {}): Promise<number> {
    if (filter.id?.includes("\u0000") === true) return 0;
    const { rowCount } = await this.host.run(
      `DELETE FROM ${this.table} WHERE ($1::text IS NULL OR id = $1) AND ($2::text IS NULL OR queue = $2)`,
      [filter.id ?? null, filter.queue ?? null],
    );
    return rowCount ?? 0;
  }
}
