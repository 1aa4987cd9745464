import { request } from "node:http";
import { CoreApp, PostgresStore, silentLogger, WebhookSource, type PostgresUrl } from "webhook-tasks";
import { jsonBody, SMALL_BODY_BYTES } from "./payload";
import { benchPostgresUrl } from "./servers/postgres-database";
import { Client } from "pg";

/**
 * `node dist/bench/history-bytes-postgres.js`: what the event history takes on PostgreSQL per event, in
 * the bench's main shape (a webhook task emitting to a second task: two events and two runs per
 * request). HISTORY_BYTES_REQUESTS requests (default 5,000) of the main case's 312-byte body,
 * then pg_total_relation_size of the history's tables (with their indexes and TOAST) over the
 * events kept. On BENCH_POSTGRES_URL, in a schema of its own, dropped at the end.
 */
async function main(): Promise<void> {
  const url = benchPostgresUrl();
  const requests = Number(process.env.HISTORY_BYTES_REQUESTS ?? 5_000);
  const schema = `bench_history_bytes_${process.pid}`;
  const store = new PostgresStore({ connectionString: url as PostgresUrl, schema });
  const app = new CoreApp("history-bytes", { store, logger: silentLogger });
  const source = new WebhookSource({ path: "/hooks/0", port: 0, host: "127.0.0.1", ack: "persisted" });
  app.task({ source, name: "hook0", emit: "next0" }, (_ctx, event) => ({ path: event.path, at: event.received_at }));
  app.task({ source: "next0", name: "next0" }, async () => undefined);
  await app.start();
  const body = jsonBody(SMALL_BODY_BYTES);
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    for (let sent = 0; sent < requests; sent += 50) {
      await Promise.all(Array.from({ length: Math.min(50, requests - sent) }, () => post(source.port, body)));
    }
    // Every run settled and written: two runs per request.
    for (;;) {
      await store.history.flush();
      const { rows } = await client.query(`SELECT count(*) AS n FROM "${schema}".history_runs`);
      if (Number(rows[0].n) >= 2 * requests) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await client.query(`VACUUM ANALYZE "${schema}".history_events, "${schema}".history_runs`);
    const { rows } = await client.query(
      `SELECT (SELECT count(*) FROM "${schema}".history_events) AS events,
        pg_total_relation_size('"${schema}".history_events') AS events_bytes,
        pg_total_relation_size('"${schema}".history_runs') AS runs_bytes`,
    );
    const events = Number(rows[0].events);
    const eventsBytes = Number(rows[0].events_bytes);
    const runsBytes = Number(rows[0].runs_bytes);
    const line = (label: string, bytes: number) => process.stdout.write(`${label}: ${Math.round(bytes / events)} bytes per event\n`);
    process.stdout.write(`${requests} requests, ${events} events (a webhook's and its emitted value's each)\n`);
    line("history_events (rows, indexes, TOAST)", eventsBytes);
    line("history_runs", runsBytes);
    line("total", eventsBytes + runsBytes);
  } finally {
    await app.stop();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
}

function post(port: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/hooks/0", method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on("end", () => (res.statusCode === 202 ? resolve() : reject(new Error(`answered ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end(body);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
