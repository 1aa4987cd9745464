import { PostgresStore, type PostgresUrl } from "webhook-tasks";

/** The PostgreSQL store of a bench server (default pool size and lease). */
export function postgresStore(url: string, schema: string, preparedStatements?: boolean): PostgresStore {
  return new PostgresStore({ connectionString: url as PostgresUrl, schema, preparedStatements });
}
