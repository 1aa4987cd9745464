import { randomBytes } from "node:crypto";
import pg from "pg";
import { PostgresStore } from "../src/store/postgres/postgres-store";
import { MessageSql } from "../src/store/postgres/message-sql";
import { encodeMessage } from "../src/store/postgres/message-rows";
import type { PostgresPool } from "../src/store/postgres/postgres-options";
import type { QueuedMessage } from "../src/store/store";

/**
 * Enqueues per second into PostgreSQL, side by side: the store's group commit (the enqueues of
 * a turn in one multi-row INSERT) against one INSERT (one transaction, one commit) per
 * message, same table, same encoding, same pool size, the same number of enqueues in flight.
 * Rounds alternate between the two. Then a backlog drained both ways: completions batched by
 * the store, against one DELETE each. `node dist/bench/postgres-group-commit.js [url]`;
 * ROUNDS, SECONDS, IN_FLIGHT (comma-separated) and BACKLOG from the environment.
 */
const url = process.argv[2] ?? process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 4);
const inFlightLevels = (process.env.IN_FLIGHT ?? "16,64,256").split(",").map(Number);
const POOL_SIZE = 10;

const body = { action: "opened", number: 42, repository: { full_name: "acme/widgets", id: 1234567 }, sender: { login: "octocat" } };
const raw = Buffer.from(JSON.stringify(body));
let serial = 0;
function nextMessage(): QueuedMessage {
  return { id: `evt-${++serial}`, payload: { body, headers: { "x-github-event": "issues" } }, raw, bodyFromRaw: true, attempts: 0, enqueuedAt: Date.now() };
}

interface Result {
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** Keeps `inFlight` calls of `enqueue` going for `seconds`; returns the rate and latencies. */
async function drive(enqueue: () => Promise<void>, inFlight: number): Promise<Result> {
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < end) {
        const started = performance.now();
        await enqueue();
        latencies.push(performance.now() - started);
        done++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { perSecond: done / seconds, p50: latencies[Math.floor(latencies.length * 0.5)], p99: latencies[Math.floor(latencies.length * 0.99)] };
}

/**
 * Completions side by side: a backlog drained by claims of 50 whose messages are completed
 * concurrently, through the store (batched: one statement for the completions of a turn)
 * against one DELETE per message.
 */
async function drainBoth(store: PostgresStore, pool: pg.Pool, schema: string): Promise<void> {
  const backlog = Number(process.env.BACKLOG ?? 20_000);
  for (const mode of ["batched completions", "one DELETE each"] as const) {
    await pool.query(`TRUNCATE "${schema}".messages`);
    for (let i = 0; i < backlog; i += 500) await Promise.all(Array.from({ length: 500 }, () => store.enqueue("q", nextMessage())));
    const started = performance.now();
    let done = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (;;) {
          const batch = await store.claim("q", 50);
          if (batch.length === 0) return;
          if (mode === "batched completions") await Promise.all(batch.map((m) => store.complete("q", m.id)));
          else await Promise.all(batch.map((m) => pool.query(`DELETE FROM "${schema}".messages WHERE queue = 'q' AND id = $1`, [m.id])));
          done += batch.length;
        }
      }),
    );
    const perSecond = done / ((performance.now() - started) / 1000);
    process.stdout.write(`drain ${done} messages, 4 claimers x 50  ${mode.padEnd(20)} ${Math.round(perSecond).toString().padStart(7)} messages/s\n`);
  }
}

async function main(): Promise<void> {
  const schema = `bench_gc_${randomBytes(4).toString("hex")}`;
  const store = new PostgresStore({ connectionString: url, schema, poolSize: POOL_SIZE, maxQueued: 100_000_000, consumer: false });
  await store.open();
  const pool = new pg.Pool({ connectionString: url, max: POOL_SIZE });
  const sql = new MessageSql(schema);
  const single = (): Promise<void> => {
    const { text, values } = sql.insert([encodeMessage("q", nextMessage())], schema, "bench", ["q"]);
    return pool.query(text, values).then(() => undefined);
  };
  const grouped = (): Promise<void> => store.enqueue("q", nextMessage());
  const { rows } = await pool.query("SHOW synchronous_commit");
  process.stdout.write(`PostgreSQL at ${url.replace(/:[^:@/]*@/, ":***@")}, synchronous_commit=${rows[0].synchronous_commit}, pool ${POOL_SIZE}, ${seconds} s x ${rounds} rounds\n`);
  try {
    for (const inFlight of inFlightLevels) {
      const results: Record<string, Result[]> = { "group commit": [], "one transaction each": [] };
      for (let r = 0; r < rounds; r++) {
        results["group commit"].push(await drive(grouped, inFlight));
        results["one transaction each"].push(await drive(single, inFlight));
        await pool.query(`TRUNCATE "${schema}".messages`);
      }
      for (const [name, runs] of Object.entries(results)) {
        const median = (pick: (r: Result) => number) => runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
        process.stdout.write(
          `${String(inFlight).padStart(4)} in flight  ${name.padEnd(22)} ${Math.round(median((r) => r.perSecond)).toString().padStart(7)} enqueues/s  p50 ${median((r) => r.p50).toFixed(1)} ms  p99 ${median((r) => r.p99).toFixed(1)} ms\n`,
        );
      }
    }
    const batches = store.batches.enqueues;
    process.stdout.write(`group commit: ${serial} messages in total, ${batches} statements from the store\n`);
    await drainBoth(store, pool, schema);
  } finally {
    await store.close();
    await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await pool.end();
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
