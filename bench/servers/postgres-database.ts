import { randomBytes } from "node:crypto";
import { Client } from "pg";

/** The PostgreSQL the bench uses (BENCH_POSTGRES_URL, read when a server starts; default the local server, trust auth). */
export function benchPostgresUrl(): string {
  return process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
}

/**
 * A schema of its own for one server under test: its connections carry an application_name
 * naming it, so the harness finds their backend processes and reads their CPU time in /proc.
 */
export class BenchDatabase {
  readonly schema: string;
  readonly applicationName: string;
  private readonly server = benchPostgresUrl();
  private client: Client | undefined;

  /** `keepTables`: tables of the schema that `empty` leaves alone (a job queue's bookkeeping). */
  constructor(serverId: string, private readonly keepTables: readonly string[] = []) {
    const tag = randomBytes(3).toString("hex");
    this.schema = `bench_${serverId.replace(/[^a-z0-9]/g, "_")}_${tag}`;
    this.applicationName = `bench-${serverId}-${tag}`;
  }

  /** The connection string the server's store uses. */
  get url(): string {
    const url = new URL(this.server);
    url.searchParams.set("application_name", this.applicationName);
    return url.toString();
  }

  /** Process ids of the server's PostgreSQL backends right now. */
  async backendPids(): Promise<number[]> {
    const { rows } = await (await this.connection()).query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [this.applicationName]);
    return rows.map((r) => r.pid);
  }

  /** Empties every table of the schema but the kept ones (between measurements, while the server is idle). */
  async empty(): Promise<void> {
    const client = await this.connection();
    const { rows } = await client.query<{ name: string }>(
      "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1 AND NOT tablename = ANY($2::text[])",
      [this.schema, [...this.keepTables]],
    );
    if (rows.length > 0) await client.query(`TRUNCATE ${rows.map((r) => r.name).join(", ")}`);
  }

  async drop(): Promise<void> {
    const client = await this.connection();
    await client.query(`DROP SCHEMA IF EXISTS "${this.schema}" CASCADE`);
    await client.end();
    this.client = undefined;
  }

  private async connection(): Promise<Client> {
    if (this.client === undefined) {
      const client = new Client({ connectionString: this.server, application_name: "bench-harness" });
      await client.connect();
      this.client = client;
    }
    return this.client;
  }
}
