import { Client } from "pg";
import { startThrowawayPostgres } from "../test/helpers/throwaway-postgres";
import { LoadGenerator } from "./load";
import { FRAMEWORK_POSTGRES } from "./servers/catalog";
import { launch } from "./servers/launch";

/**
 * Where the database's time goes per webhook: `framework-postgres` under full load (main case)
 * against a throwaway cluster with pg_stat_statements (planning time tracked), then execution
 * and planning time per webhook by kind of statement.
 * `npm run build && node dist/bench/postgres-statements.js` (PG_STATEMENTS_SECONDS, default 5).
 */
const seconds = Number(process.env.PG_STATEMENTS_SECONDS ?? 5);

const KIND = `CASE
  WHEN query ILIKE 'WITH inserted AS%' THEN 'enqueue (multi-row INSERT)'
  WHEN query ILIKE '%FOR UPDATE SKIP LOCKED%' THEN 'claim (UPDATE ... SKIP LOCKED)'
  WHEN query ILIKE '%DELETE%' THEN 'complete (DELETE)'
  WHEN query ILIKE '%lease_until%' THEN 'leases (renew, reap)'
  WHEN query ILIKE '%count(*)%' THEN 'depth count'
  ELSE left(regexp_replace(query, '\\s+', ' ', 'g'), 60) END`;

async function main(): Promise<void> {
  const cluster = await startThrowawayPostgres({
    settings: { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all", "pg_stat_statements.track_planning": "on" },
  });
  const load = new LoadGenerator();
  const client = new Client({ connectionString: cluster.url });
  try {
    // The bench's servers read their database from here when they start.
    process.env.BENCH_POSTGRES_URL = cluster.url;
    await client.connect();
    await client.query("CREATE EXTENSION pg_stat_statements");
    const server = await launch(FRAMEWORK_POSTGRES, { paths: ["/hooks/0"], port: 0 });
    try {
      const job = { port: server.port, paths: server.paths, bodyBytes: 312, connections: 50, keepAlive: true };
      await load.run({ ...job, seconds: 1 });
      await client.query("SELECT pg_stat_statements_reset()");
      const result = await load.run({ ...job, seconds });
      await new Promise((resolve) => setTimeout(resolve, 2000)); // the task runner drains
      const { rows } = await client.query<{ kind: string; calls: number; rows: number; exec_us: string; plan_us: string }>(
        `SELECT kind, sum(calls)::int AS calls, sum(rows)::int AS rows,
                round((sum(total_exec_time) * 1000 / $1)::numeric, 1) AS exec_us, round((sum(total_plan_time) * 1000 / $1)::numeric, 1) AS plan_us
         FROM (SELECT calls, rows, total_exec_time, total_plan_time, ${KIND} AS kind FROM pg_stat_statements
               WHERE query NOT ILIKE '%pg_stat_statements%') AS s
         GROUP BY kind ORDER BY sum(total_exec_time + total_plan_time) DESC`,
        [result.ok],
      );
      process.stdout.write(`${result.ok} webhooks in ${seconds} s (${result.rps.toFixed(0)} req/s); database time per webhook:\n\n`);
      process.stdout.write("| statement | calls | rows | execution µs | planning µs |\n|---|---:|---:|---:|---:|\n");
      for (const r of rows) process.stdout.write(`| ${r.kind} | ${r.calls} | ${r.rows} | ${r.exec_us} | ${r.plan_us} |\n`);
    } finally {
      await server.stop();
    }
  } finally {
    load.close();
    await client.end().catch(() => undefined);
    await cluster.destroy();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`postgres-statements failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
