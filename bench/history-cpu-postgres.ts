/**
 * CPU per request of the PostgreSQL history's writes alone, without HTTP, queues or tasks: the
 * notes of the bench's main case (a 312-byte webhook whose task emits to a second task: two
 * events and two runs per request) fed at RATE requests a second for SECONDS to the history's
 * background writer, on one connection, in a fresh schema. Reported per request: the database
 * backend's CPU (its /proc/<pid>/stat: the server runs on this machine), this process's CPU
 * (process.cpuUsage), the server's WAL (pg_stat_wal: the whole server's, so a quiet one) and the
 * tables' bytes per event.
 *
 * Side by side: BASELINE_DIST names another build's dist directory (say, the previous commit's,
 * built in a worktree of its own); its history is measured in the same run, rounds alternating.
 * Run: `npx tsc -p tsconfig.json && node dist/bench/history-cpu-postgres.js`
 * (RATE, SECONDS, ROUNDS, BASELINE_DIST, BENCH_POSTGRES_URL).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Pool } from "pg";
import type { PostgresPool } from "../src/store/postgres/postgres-options";
import { feedMainShape, type NoteSink } from "./history-notes";
import { TICK_US } from "./thread-ticks";
import { benchPostgresUrl } from "./servers/postgres-database";

const RATE = Number(process.env.RATE ?? 3_000);
const SECONDS = Number(process.env.SECONDS ?? 6);
const ROUNDS = Number(process.env.ROUNDS ?? 2);

interface HistoryLike extends NoteSink {
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** The parts of one build the bench uses. */
interface Build {
  readonly label: string;
  readonly migrate: (pool: PostgresPool, schema: string) => Promise<unknown>;
  readonly history: (pool: Pool, schema: string) => HistoryLike;
}

function loadBuild(label: string, dist: string): Build {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { migrate } = require(join(dist, "src/store/postgres/migrations")) as { migrate: Build["migrate"] };
  const { PostgresHistory } = require(join(dist, "src/store/postgres/history/postgres-history")) as {
    PostgresHistory: new (host: object) => HistoryLike;
  };
  const { ThrottledLog } = require(join(dist, "src/store/postgres/throttled-log")) as { ThrottledLog: new (logger: undefined) => object };
  let statements = 0;
  const names = new Map<string, string>();
  return {
    label,
    migrate,
    history: (pool, schema) =>
      new PostgresHistory({
        schema,
        run: (text: string, values: unknown[]) => pool.query(text, values),
        // Prepared, as the store does.
        write: (text: string, values: unknown[]) => {
          let name = names.get(text);
          if (name === undefined) names.set(text, (name = `h${label}${++statements}`));
          return pool.query({ text, values, name });
        },
        connect: () => pool.connect(),
        log: new ThrottledLog(undefined),
        logger: undefined,
      }),
  };
}

function backendTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

interface Figures {
  readonly dbUs: number;
  readonly appUs: number;
  readonly walBytes: number;
  readonly bytesPerEvent: number;
}

async function measure(build: Build): Promise<Figures> {
  const url = benchPostgresUrl();
  const schema = `bench_history_cpu_${randomBytes(3).toString("hex")}`;
  // One connection: the writer sends one statement at a time, and its backend is the one measured.
  const pool = new Pool({ connectionString: url, max: 1 });
  try {
    await build.migrate(pool as unknown as PostgresPool, schema);
    const pid = Number((await pool.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
    const history = build.history(pool, schema);
    let sent = 0;
    const feed = async (ms: number) => {
      sent += await feedMainShape(history, RATE, ms);
    };
    await feed(2_000); // warm-up: statements prepared, code optimized
    await history.flush();
    const wal = async () => BigInt((await pool.query("SELECT wal_bytes::text AS b FROM pg_stat_wal")).rows[0].b as string);
    const wal0 = await wal();
    const ticks = backendTicks(pid);
    const cpu = process.cpuUsage();
    const from = sent;
    await feed(SECONDS * 1_000);
    await history.flush();
    const used = process.cpuUsage(cpu);
    const dbTicks = backendTicks(pid) - ticks;
    const walBytes = Number((await wal()) - wal0);
    const n = sent - from;
    await pool.query(`VACUUM ANALYZE "${schema}".history_events, "${schema}".history_runs`);
    const { rows } = await pool.query(
      `SELECT (SELECT count(*) FROM "${schema}".history_events) AS events,
        pg_total_relation_size('"${schema}".history_events') + pg_total_relation_size('"${schema}".history_runs') AS bytes`,
    );
    await history.close();
    return { dbUs: (dbTicks * TICK_US) / n, appUs: (used.user + used.system) / n, walBytes: walBytes / n, bytesPerEvent: Number(rows[0].bytes) / Number(rows[0].events) };
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
  }
}

async function main(): Promise<void> {
  const builds = [loadBuild("this", resolve(__dirname, ".."))];
  if (process.env.BASELINE_DIST) builds.unshift(loadBuild("baseline", resolve(process.env.BASELINE_DIST)));
  const results = new Map<string, Figures[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of builds) {
      const figures = await measure(build);
      results.set(build.label, [...(results.get(build.label) ?? []), figures]);
      process.stdout.write(
        `${build.label.padEnd(9)} round ${round + 1}: db ${figures.dbUs.toFixed(1)} µs/request, app ${figures.appUs.toFixed(1)} µs/request, ` +
          `WAL ${Math.round(figures.walBytes)} B/request, ${Math.round(figures.bytesPerEvent)} bytes/event\n`,
      );
    }
  }
  process.stdout.write(`${RATE} requests/s for ${SECONDS} s, ${ROUNDS} rounds; medians:\n`);
  for (const [label, all] of results) {
    const median = (pick: (f: Figures) => number) => {
      const sorted = all.map(pick).sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)];
    };
    process.stdout.write(
      `${label.padEnd(9)} db ${median((f) => f.dbUs).toFixed(1)} µs/request, app ${median((f) => f.appUs).toFixed(1)} µs/request, ` +
        `WAL ${Math.round(median((f) => f.walBytes))} B/request, ${Math.round(median((f) => f.bytesPerEvent))} bytes/event\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
