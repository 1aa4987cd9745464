import type { Logger } from "../../util/logger";
import type { PostgresPool } from "./postgres-options";
import { CLAIM_KEYS_MIGRATION } from "./claim-keys-migration";
import { CLAIM_PLANS_MIGRATION } from "./claim-plans-migration";
import { FLOW_MIGRATION } from "./flow-claim-sql";
import { GROUP_MIGRATION } from "./group-claim-sql";
import { HISTORY_INDEX_MIGRATION } from "./history/history-index-migration";

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
  {
    version: 2,
    name: "event history, paused tasks",
    sql: `
      -- No foreign key between the two: replicas write their notes each in its own batches, so a
      -- run may be written before its event (the other replica's batch is still waiting).
      CREATE TABLE $schema.history_events (
        -- Ids and names compare as bytes ("C"): the order the other engines list in, and cheaper.
        id text COLLATE "C" PRIMARY KEY,
        -- ms since the epoch.
        received_at double precision NOT NULL,
        -- A webhook source's label, or the queue a task emitted to (one of the two).
        source text COLLATE "C",
        queue text COLLATE "C",
        name text,
        parent_id text COLLATE "C",
        replay_of text COLLATE "C",
        trace_id text,
        -- Its deliveries, one per task it was handed to, as three arrays of the same length (no
        -- row of their own: a delivery's status comes from its latest run).
        tasks text[] NOT NULL,
        queues text[] NOT NULL,
        message_ids text[] NOT NULL,
        -- A webhook's payload without its body when the body is exactly the JSON of the raw
        -- bytes (body_from_raw): stored once, read back by parsing them.
        payload jsonb,
        raw bytea,
        body_from_raw boolean NOT NULL DEFAULT false
      );
      -- Newest-first paging (scanned backwards), pruning oldest first, activity since a time.
      CREATE INDEX history_events_by_time ON $schema.history_events (received_at, id);
      CREATE INDEX history_events_by_source ON $schema.history_events (source, received_at, id) WHERE source IS NOT NULL;
      CREATE INDEX history_events_by_task ON $schema.history_events USING gin (tasks);
      CREATE INDEX history_events_by_parent ON $schema.history_events (parent_id) WHERE parent_id IS NOT NULL;
      CREATE INDEX history_events_by_replayed ON $schema.history_events (replay_of) WHERE replay_of IS NOT NULL;
      -- Search by a header's value, whatever its name (a delivery id): the values as a jsonb array.
      -- A body field search has no index: one GIN entry per field of every body would cost more
      -- than all the rest of an event's row; it walks the events newest first instead.
      CREATE INDEX history_events_by_header ON $schema.history_events
        USING gin (jsonb_path_query_array(payload -> 'headers', '$.*[*]') jsonb_path_ops) WHERE source IS NOT NULL;

      -- Insert-only: a delivery's status is its latest run's (none yet: pending).
      CREATE TABLE $schema.history_runs (
        event_id text COLLATE "C" NOT NULL,
        task text COLLATE "C" NOT NULL,
        attempt integer NOT NULL,
        started_at double precision NOT NULL,
        duration_ms double precision NOT NULL,
        outcome text NOT NULL,
        -- 0 succeeded, 1 pending, 2 failed, 3 dead: the larger, the worse.
        status smallint NOT NULL,
        error_type text,
        error_message text,
        error_stack text,
        emitted text[],
        -- Also makes a batch written twice (its commit's reply lost) write each run once.
        PRIMARY KEY (event_id, task, started_at, attempt)
      );
      -- Failed and dead runs are few: the status filter starts from them.
      CREATE INDEX history_runs_unsettled ON $schema.history_runs (status, event_id) WHERE status >= 2;
      -- Runs whose event was never written (a replica died before its batch): pruned by age.
      CREATE INDEX history_runs_by_time ON $schema.history_runs USING brin (started_at);

      CREATE TABLE $schema.paused_tasks (
        task text COLLATE "C" PRIMARY KEY,
        paused_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  { version: 3, name: "flow limits: concurrency and rate keys, rate starts, limited claims", sql: FLOW_MIGRATION },
  { version: 4, name: "debounced and batched tasks: group keys, group claims", sql: GROUP_MIGRATION },
  { version: 5, name: "history: leaner indexes (first task, several tasks, time and source without the id)", sql: HISTORY_INDEX_MIGRATION },
  { version: 6, name: "claims of limited and grouped tasks planned per call", sql: CLAIM_PLANS_MIGRATION },
  { version: 7, name: "limited claims: a message without a concurrency key in the shared group, claimed messages with their flow keys", sql: CLAIM_KEYS_MIGRATION },
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
