import type { Logger } from "../../util/logger";
import type { PostgresPool } from "./postgres-options";
import { FLOW_MIGRATION } from "./flow-claim-sql";

/** One step of the schema; never edited once released, only followed by new ones. */
interface Migration {
  readonly version: number;
  readonly name: string;
  /** Statements, with `$schema` standing for the quoted schema name. */
  readonly sql: string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "messages, dead letters, state",
    sql: `
      CREATE TABLE $schema.messages (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        queue text NOT NULL,
        id text NOT NULL,
        payload bytea NOT NULL,
        raw bytea,
        attempts integer NOT NULL,
        -- ms since the epoch, as given (a fraction stays a fraction).
        enqueued_at double precision NOT NULL,
        last_error text,
        body_from_raw boolean NOT NULL DEFAULT false,
        ordering_key text,
        trace_context jsonb,
        visible_at bigint NOT NULL DEFAULT 0,
        claimed_by text,
        lease_until timestamptz
      );
      -- Depth counts and the oldest message of a queue.
      CREATE INDEX messages_by_queue ON $schema.messages (queue, enqueued_at);
      -- Waiting messages in arrival order, and delayed retries by due time: what claims scan.
      CREATE INDEX messages_ready ON $schema.messages (queue, seq) WHERE claimed_by IS NULL AND visible_at = 0;
      CREATE INDEX messages_delayed ON $schema.messages (queue, visible_at, seq) WHERE claimed_by IS NULL AND visible_at > 0;
      -- Claimed messages: by lease deadline (the reaper), by id (one claim per id at a time).
      CREATE INDEX messages_leases ON $schema.messages (lease_until) WHERE claimed_by IS NOT NULL;
      CREATE INDEX messages_claimed_ids ON $schema.messages (queue, id) WHERE claimed_by IS NOT NULL;
      -- Ordering keys: is there an earlier message with this key, is one with this key claimed.
      CREATE INDEX messages_keys ON $schema.messages (queue, ordering_key, seq) WHERE ordering_key IS NOT NULL;
      CREATE INDEX messages_claimed_keys ON $schema.messages (queue, ordering_key) WHERE claimed_by IS NOT NULL AND ordering_key IS NOT NULL;

      CREATE TABLE $schema.dead_letters (
        id text PRIMARY KEY,
        queue text NOT NULL,
        task text NOT NULL,
        error text NOT NULL,
        attempts integer NOT NULL,
        died_at double precision NOT NULL,
        payload bytea NOT NULL,
        raw bytea,
        message_attempts integer NOT NULL,
        -- ms since the epoch, as given (a fraction stays a fraction).
        enqueued_at double precision NOT NULL,
        last_error text,
        body_from_raw boolean NOT NULL DEFAULT false,
        ordering_key text,
        trace_context jsonb
      );
      CREATE INDEX dead_letters_by_queue ON $schema.dead_letters (queue, died_at);

      -- Keys are hashed for the primary key: a key of any length fits an index entry.
      CREATE TABLE $schema.state (
        namespace text NOT NULL,
        key_hash bytea NOT NULL,
        key bytea NOT NULL,
        value bytea NOT NULL,
        expires_at timestamptz,
        PRIMARY KEY (namespace, key_hash)
      );
      CREATE INDEX state_expiry ON $schema.state (expires_at) WHERE expires_at IS NOT NULL;
    `,
  },
  { version: 2, name: "flow limits: concurrency and rate keys, rate starts, limited claims", sql: FLOW_MIGRATION },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/**
 * Brings the schema up to date: creates it and the migrations table when missing, then applies
 * the migrations it has not seen, all in one transaction under an advisory lock, so that
 * replicas starting at the same moment wait for each other instead of racing the same DDL.
 * Returns the versions applied (none when the schema was current).
 */
export async function migrate(pool: PostgresPool, schema: string, logger?: Logger): Promise<number[]> {
  const q = `"${schema}"`;
  const client = await pool.connect();
  let broken: Error | undefined;
  const applied: number[] = [];
  try {
    // READ COMMITTED whatever the database's default: under REPEATABLE READ or SERIALIZABLE the
    // snapshot would be taken before the lock is granted, and a replica that waited for the
    // lock would not see the schema the first one made (and fail to create it again).
    await client.query({ text: "BEGIN ISOLATION LEVEL READ COMMITTED" });
    try {
      // DDL on a large table may take longer than a statement's usual limit.
      await client.query({ text: "SET LOCAL statement_timeout = 0" });
      await client.query({ text: "SELECT pg_advisory_xact_lock(hashtext('webhook-tasks migrations'), hashtext($1))", values: [schema] });
      // Looked up first: a schema made beforehand needs no CREATE right on the database.
      const exists = await client.query({ text: "SELECT 1 FROM pg_namespace WHERE nspname = $1", values: [schema] });
      if (exists.rows.length === 0) await client.query({ text: `CREATE SCHEMA ${q}` });
      await client.query({
        text: `CREATE TABLE IF NOT EXISTS ${q}.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
      });
      const { rows } = await client.query({ text: `SELECT coalesce(max(version), 0) AS version FROM ${q}.migrations` });
      const current = Number(rows[0].version);
      if (current > LATEST_SCHEMA_VERSION) {
        logger?.warn({ store: "postgres", schema, version: current, known: LATEST_SCHEMA_VERSION }, "the store's schema is newer than this version of webhook-tasks knows; using it as it is");
      }
      for (const migration of MIGRATIONS) {
        if (migration.version <= current) continue;
        await client.query({ text: migration.sql.replaceAll("$schema", q) });
        await client.query({ text: `INSERT INTO ${q}.migrations (version, name) VALUES ($1, $2)`, values: [migration.version, migration.name] });
        applied.push(migration.version);
      }
      await client.query({ text: "COMMIT" });
    } catch (error) {
      await client.query({ text: "ROLLBACK" }).catch((rollback: unknown) => {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      });
      throw error;
    }
  } catch (error) {
    broken ??= error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    // A connection whose transaction failed half-way is not given back to others.
    client.release(broken);
  }
  if (applied.length > 0) logger?.info({ store: "postgres", schema, applied }, "store schema migrated");
  return applied;
}
