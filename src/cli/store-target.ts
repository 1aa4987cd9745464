import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import pg from "pg";
import { describeStore } from "../store/create-store";
import { DEFAULT_POSTGRES_SCHEMA, isPostgresUrl, postgresOptionsFromUrl, type PostgresUrl } from "../store/postgres/postgres-options";
import { storeFailureDetail } from "../store/store-errors";
import type { AppStoreTarget } from "./app-store";

/**
 * `--store <postgres-url | data-dir>`: a store named directly, no app code imported (so no
 * secret the app reads at import needs to be set). What consumes each queue is then unknown.
 * A store that does not exist is refused rather than created empty: an embedded directory
 * without data.mdb, a PostgreSQL schema without the store's tables.
 */
export async function storeTargetOfStore(value: string): Promise<AppStoreTarget> {
  if (isPostgresUrl(value)) {
    await requireSchema(value);
    return { appName: undefined, label: `store ${describeStore(value)}`, store: value, dataDir: undefined, maxQueued: undefined, maxBytes: undefined, tasks: undefined };
  }
  if (value.includes("://")) {
    // Only the scheme: the rest may hold a password.
    throw new Error(`--store ${value.slice(0, value.indexOf("://"))}://…: give a postgres:// URL or the data directory of an embedded store`);
  }
  const dir = resolve(value);
  if (!existsSync(join(dir, "data.mdb"))) {
    // A mistyped URL ("postgres:/u:pw@db") reads as a directory: its path would show the password.
    if (value.includes("@") || /^[a-z][a-z0-9+.-]*:/i.test(value)) throw new Error("--store: no embedded store at that path, and not a postgres:// URL (the value is not shown: it may hold a password): give a postgres:// URL or the data directory of an embedded store");
    throw new Error(`no embedded store at ${dir} (no data.mdb there): give the data directory of an app that ran`);
  }
  return { appName: undefined, label: `store ${dir}`, store: "embedded", dataDir: dir, maxQueued: undefined, maxBytes: undefined, tasks: undefined };
}

/** Opening the store would create a schema a typo named: look for its tables first. */
async function requireSchema(url: PostgresUrl): Promise<void> {
  let held: { found: boolean; schema: string };
  try {
    held = await schemaHoldsStore(url);
  } catch (error) {
    throw new Error(`store ${describeStore(url)}: cannot connect: ${storeFailureDetail(error)}`);
  }
  if (!held.found) throw new Error(`no webhook-tasks store in schema "${held.schema}" at ${describeStore(url)}: give the URL (and ?schema=) an app used`);
}

/** Whether the URL's schema holds the store's tables (opening it would create them); throws what connecting threw. */
export async function schemaHoldsStore(url: PostgresUrl): Promise<{ found: boolean; schema: string }> {
  const { connectionString, schema = DEFAULT_POSTGRES_SCHEMA } = postgresOptionsFromUrl(url);
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 5_000 });
  // An idle client that loses its connection emits "error": the query below reports it instead.
  client.on("error", () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query("SELECT to_regclass($1) IS NOT NULL AS found", [`"${schema}".migrations`]);
    return { found: rows[0]?.found === true, schema };
  } finally {
    await client.end().catch(() => undefined);
  }
}
