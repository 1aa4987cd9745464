import type { PauseStore } from "../../history";
import type { PostgresQueryResult } from "../postgres-options";

export interface PostgresPausesHost {
  readonly schema: string;
  readonly run: (text: string, values: unknown[]) => Promise<PostgresQueryResult>;
  /** The schema's notification channel, and this process's token (its own notifications are not heard back). */
  readonly channel: string;
  readonly token: string;
}

/** What a notification about pauses carries after the sender's token (a queue's carries a newline and the queue). */
export const PAUSES_NOTICE = "\tpauses";

/**
 * Paused tasks in a table of the schema: they hold across restarts, and every replica reads the
 * same set. A change is committed with a notification in the same statement, so every
 * replica's `watch` listeners hear it at once (a replica that was not listening then reads
 * the set again when it listens again).
 */
export class PostgresPauses implements PauseStore {
  private readonly table: string;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly host: PostgresPausesHost) {
    this.table = `"${host.schema}".paused_tasks`;
  }

  async paused(): Promise<ReadonlySet<string>> {
    const { rows } = await this.host.run(`SELECT task FROM ${this.table}`, []);
    return new Set(rows.map((row) => row.task as string));
  }

  async setPaused(task: string, paused: boolean): Promise<void> {
    if (typeof task !== "string" || task.length === 0) throw new TypeError(`pause: a task name must be a non-empty string, got ${JSON.stringify(task)}`);
    if (typeof paused !== "boolean") throw new TypeError("pause: paused must be true or false");
    const change = paused
      ? `INSERT INTO ${this.table} (task) VALUES ($1) ON CONFLICT (task) DO NOTHING`
      : `DELETE FROM ${this.table} WHERE task = $1`;
    const { channel, token } = this.host;
    await this.host.run(`WITH change AS (${change} RETURNING 1) SELECT pg_notify($2, $3), (SELECT count(*) FROM change) AS changed`, [task, channel, token + PAUSES_NOTICE]);
    this.changed();
  }

  watch(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The set may have changed (here, in another replica, or while notifications were missed). */
  changed(): void {
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
