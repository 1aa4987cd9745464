import { createHash } from "node:crypto";
import type { StateSetOptions, StateStore } from "../store";
import { encodePayload, decodePayload } from "../payload-codec";

/** How the state runs its statements: through the store, which tracks the database's health. */
export type RunQuery = (text: string, values: unknown[]) => Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;

/**
 * Task state in a table shared by every process of the schema. Expiry is the database's
 * clock, so processes with clocks apart agree on it; an expired row is ignored on read and
 * removed by the sweep. `setIfAbsent` is one INSERT ... ON CONFLICT statement: exactly one of
 * any number of concurrent callers, in any process, gets true.
 */
export class PostgresState implements StateStore {
  private readonly table: string;

  constructor(
    private readonly run: RunQuery,
    schema: string,
    private readonly namespace: string,
  ) {
    this.table = `"${schema}".state`;
  }

  async get<V = unknown>(key: string): Promise<V | undefined> {
    const { rows } = await this.run(
      `SELECT value FROM ${this.table} WHERE namespace = $1 AND key_hash = $2 AND (expires_at IS NULL OR expires_at > now())`,
      [this.namespace, hashKey(key)],
    );
    return rows.length === 0 ? undefined : (decodePayload(rows[0].value as Buffer) as V);
  }

  async set<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<void> {
    await this.run(
      `INSERT INTO ${this.table} (namespace, key_hash, key, value, expires_at) VALUES ($1, $2, $3, $4, ${expiry("$5")})
       ON CONFLICT (namespace, key_hash) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
      [this.namespace, hashKey(key), Buffer.from(key, "utf8"), encodePayload(value, "state"), ttlOf(options)],
    );
  }

  /** True when a live value was there; an expired one counts as absent, as for `get`. */
  async delete(key: string): Promise<boolean> {
    const { rows } = await this.run(
      `DELETE FROM ${this.table} WHERE namespace = $1 AND key_hash = $2 RETURNING (expires_at IS NULL OR expires_at > now()) AS live`,
      [this.namespace, hashKey(key)],
    );
    return rows.length > 0 && rows[0].live === true;
  }

  async setIfAbsent<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<boolean> {
    const { rowCount } = await this.run(
      `INSERT INTO ${this.table} AS s (namespace, key_hash, key, value, expires_at) VALUES ($1, $2, $3, $4, ${expiry("$5")})
       ON CONFLICT (namespace, key_hash) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
       WHERE s.expires_at IS NOT NULL AND s.expires_at <= now()`,
      [this.namespace, hashKey(key), Buffer.from(key, "utf8"), encodePayload(value, "state"), ttlOf(options)],
    );
    return rowCount === 1;
  }
}

/** Removes up to `limit` expired entries per statement, until none is left; returns how many. */
export async function sweepExpiredState(run: RunQuery, schema: string, limit = 1_000): Promise<number> {
  const table = `"${schema}".state`;
  let removed = 0;
  for (;;) {
    const { rowCount } = await run(
      `DELETE FROM ${table} WHERE ctid IN (SELECT ctid FROM ${table} WHERE expires_at IS NOT NULL AND expires_at <= now() LIMIT $1)`,
      [limit],
    );
    removed += rowCount ?? 0;
    if ((rowCount ?? 0) < limit) return removed;
  }
}

/** Keys of any length fit the primary key as a digest; the key itself is kept beside it. */
function hashKey(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

function expiry(param: string): string {
  return `CASE WHEN ${param}::bigint IS NULL THEN NULL ELSE now() + ${param}::bigint * interval '1 millisecond' END`;
}

function ttlOf(options: StateSetOptions | undefined): number | null {
  const ttl = options?.ttlMs;
  if (ttl === undefined) return null;
  if (typeof ttl !== "number" || !Number.isFinite(ttl)) throw new TypeError("state: ttlMs must be a finite number of milliseconds");
  return Math.round(ttl);
}
