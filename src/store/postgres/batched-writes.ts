import { committedAnyway, mayHaveCommitted } from "./ambiguous-commit";
import { GroupCommit } from "./group-commit";
import type { Held } from "./held-messages";
import type { EncodedMessage } from "./message-rows";
import type { MessageSql } from "./message-sql";
import type { PostgresQueryResult } from "./postgres-options";
import { statementName } from "./prepared-statements";

/** A new message for `queue`, encoded. */
export interface NewRow {
  readonly queue: string;
  readonly row: EncodedMessage;
}

/** A task's success: its input (when this process holds it) leaves, its outputs (one per consuming task) arrive. */
export interface Completion {
  readonly held: Held | undefined;
  readonly emits: readonly NewRow[];
}

export interface BatchedWritesHost {
  readonly sql: MessageSql;
  /** Runs one statement (and tracks the database's health); `name` makes it a prepared statement. */
  readonly query: (text: string, values: unknown[], name?: string) => Promise<PostgresQueryResult>;
  readonly channel: string;
  readonly token: string;
}

/** Most rows, and bytes, one group-committed statement carries (PostgreSQL takes 65,535 parameters). */
const BATCH_LIMITS = { maxItems: 500, maxBytes: 8 * 1024 * 1024 };

/**
 * The two hot writes, group-committed: new messages (one multi-row INSERT per batch) and
 * completions (one statement per batch deleting the inputs and inserting the outputs). Each
 * statement is its own transaction: a call resolves once the batch holding it is committed.
 */
export class BatchedWrites {
  /** Items are an event's copies: always in one statement, so all or none of them is committed. */
  private readonly enqueues: GroupCommit<readonly NewRow[], void>;
  private readonly completions: GroupCommit<Completion, boolean>;

  constructor(private readonly host: BatchedWritesHost) {
    this.enqueues = new GroupCommit((groups) => this.insertRows(groups), { ...BATCH_LIMITS, sizeOf: sumBytes, rowsOf: (g) => g.length });
    this.completions = new GroupCommit((items) => this.writeCompletions(items), {
      ...BATCH_LIMITS,
      sizeOf: (c) => 64 + sumBytes(c.emits),
      rowsOf: (c) => Math.max(1, c.emits.length),
    });
  }

  /** Statements written so far (each one a commit). */
  get batches(): { readonly enqueues: number; readonly completions: number } {
    return { enqueues: this.enqueues.batches, completions: this.completions.batches };
  }

  /** Inserts `rows` (an event's copies) in one statement: committed together or not at all. */
  insert(rows: readonly NewRow[]): Promise<void> {
    return this.enqueues.add(rows);
  }

  /**
   * Resolves true when the input was deleted here (or there was none): false means another
   * process had claimed the input since this one's lease expired, and the output was not written.
   */
  complete(completion: Completion): Promise<boolean> {
    return this.completions.add(completion);
  }

  /** Resolves once no batch is waiting or being written. */
  async idle(): Promise<void> {
    await Promise.all([this.enqueues.idle(), this.completions.idle()]);
  }

  private async insertRows(groups: Array<readonly NewRow[]>): Promise<void[]> {
    const { sql, channel, token } = this.host;
    const items = groups.length === 1 ? groups[0] : groups.flat();
    const queues = [...new Set(items.map((i) => i.queue))];
    const { text, values } = sql.insert(
      items.map((i) => i.row),
      channel,
      token,
      queues,
    );
    try {
      await this.host.query(text, values, statementName(text));
    } catch (error) {
      // A commit whose reply was lost: answering 503 would make the sender's retry a second
      // event (and a deduplicated source would forget the delivery). Look before failing.
      if (!mayHaveCommitted(error)) throw error;
      const rows = items.map((i) => i.row);
      const landed = await committedAnyway(rows, sql, (t, v) => this.host.query(t, v)).catch(() => false);
      if (!landed) throw error;
    }
    return new Array<void>(groups.length);
  }

  private async writeCompletions(items: Completion[]): Promise<boolean[]> {
    const inputs: number[] = [];
    const emits: Array<{ inputSeq: number | null; row: EncodedMessage }> = [];
    // Queues to wake elsewhere: those that got an output, and those where a key is free now.
    const queues = new Set<string>();
    for (const { held, emits: outputs } of items) {
      if (held) inputs.push(held.seq);
      if (held?.keyed) queues.add(held.queue);
      for (const emit of outputs) {
        emits.push({ inputSeq: held?.seq ?? null, row: emit.row });
        queues.add(emit.queue);
      }
    }
    const { sql, channel, token } = this.host;
    const { text, values } = sql.complete(inputs, emits, channel, token, [...queues]);
    // Not named: it looks its inputs up in messages (see prepared-statements).
    const { rows } = await this.host.query(text, values);
    const done = new Set((rows[0].done as string[]).map(Number));
    return items.map(({ held }) => held === undefined || done.has(held.seq));
  }
}

function sumBytes(rows: readonly NewRow[]): number {
  let bytes = 0;
  for (const r of rows) bytes += r.row.bytes;
  return bytes;
}
