import PgBoss from "pg-boss";
import { serveBare } from "./bare-http";
import { readConfig } from "./server-config";

/**
 * What a user might build instead of our PostgreSQL store: bare `node:http` and pg-boss on the
 * same database (the harness's schema): each request is `send` to a queue and answered 202
 * once that resolves (the job committed); a worker in the same process consumes the queue,
 * in batches of 16 as our store claims, and with `emit` sends a small job on to a second
 * queue that a second worker consumes and drops.
 */
const config = readConfig();
const QUEUE = "hook";
const NEXT = "next";

async function main(): Promise<void> {
  // Pool of 10, as our store's; pg-boss's own maintenance and monitoring left at their defaults.
  const boss = new PgBoss({ connectionString: config.postgresUrl!, schema: config.postgresSchema!, max: 10 });
  boss.on("error", (error: Error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  await boss.start();
  await boss.createQueue(QUEUE);
  await boss.createQueue(NEXT);
  const work = { batchSize: 16, pollingIntervalSeconds: 0.5 };
  await boss.work<{ path: string; received_at: number }>(QUEUE, work, async (jobs) => {
    if (config.emit) await boss.insert(jobs.map((job) => ({ name: NEXT, data: { path: job.data.path, at: job.data.received_at } })));
  });
  await boss.work(NEXT, work, async () => {});

  serveBare(config, (event) => boss.send(QUEUE, event), () => boss.stop({ graceful: false, wait: true }));
}

main().catch((error: unknown) => {
  process.stderr.write(`pg-boss server failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
