import { randomBytes } from "node:crypto";
import pg from "pg";
import { CoreApp, silentLogger } from "../../../src/index";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import type { PostgresStoreOptions } from "../../../src/store/postgres/postgres-options";

/** The shared test server; override with $WEBHOOK_TASKS_TEST_POSTGRES. */
export const TEST_POSTGRES_URL = process.env.WEBHOOK_TASKS_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";

/** A schema name no other test (or helper process) uses. */
export function uniqueSchema(prefix = "wt_test"): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
}

/**
 * Stores and apps on fresh schemas of the shared server; `cleanup` stops the apps, closes the
 * stores, then drops every schema made.
 */
export class PostgresFixture {
  private readonly schemas = new Set<string>();
  private readonly stores: PostgresStore[] = [];
  private readonly apps: CoreApp[] = [];

  constructor(readonly url = TEST_POSTGRES_URL) {}

  schema(): string {
    const name = uniqueSchema();
    this.schemas.add(name);
    return name;
  }

  /** A new, unopened store; on a new schema unless `schema` is given. */
  store(options: Partial<PostgresStoreOptions> = {}): PostgresStore {
    const schema = options.schema ?? this.schema();
    this.schemas.add(schema);
    const store = new PostgresStore(options.pool ? { schema, ...options } : { connectionString: this.url, schema, ...options });
    this.stores.push(store);
    return store;
  }

  /** A new, unstarted app (silent) whose store is a schema of this server: a new one unless `schema` is given. */
  app(name: string, schema = this.schema()): CoreApp {
    this.schemas.add(schema);
    const app = new CoreApp(name, { store: `${this.url}?schema=${schema}` as `postgres://${string}`, logger: silentLogger });
    this.apps.push(app);
    return app;
  }

  async cleanup(): Promise<void> {
    for (const app of this.apps.splice(0)) await app.stop({ timeoutMs: 3_000 }).catch(() => undefined);
    for (const store of this.stores.splice(0)) await store.close().catch(() => undefined);
    if (this.schemas.size === 0) return;
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      for (const schema of this.schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      this.schemas.clear();
      await client.end();
    }
  }
}
