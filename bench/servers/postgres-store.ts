import type { CoreAppOptions } from "webhook-tasks";
import * as api from "webhook-tasks";

/** The PostgreSQL store of a bench server. */
export function postgresStore(url: string, schema: string): CoreAppOptions["store"] {
  const PostgresStore = (api as unknown as Record<string, new (options: object) => never>).PostgresStore;
  if (PostgresStore === undefined) throw new Error("no PostgresStore in this build");
  return new PostgresStore({ connectionString: url, schema });
}
