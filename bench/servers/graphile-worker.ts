import { Logger, run } from "graphile-worker";
import { serveBare } from "./bare-http";
import { readConfig } from "./server-config";

/**
 * What a user might build instead of our PostgreSQL store: bare `node:http` and graphile-worker
 * on the same database (the harness's schema): each request is an `addJob` answered 202 once
 * it resolves (the job committed); the runner in the same process works the jobs, and with
 * `emit` each job adds a small job for a second task that does nothing.
 */
const config = readConfig();

async function main(): Promise<void> {
  const runner = await run({
    connectionString: config.postgresUrl!,
    schema: config.postgresSchema!,
    // Pool of 10 and 16 jobs at once, as our store and runner use.
    maxPoolSize: 10,
    concurrency: 16,
    noHandleSignals: true,
    // Its default logger writes a line per job; ours runs silent in the bench, so this does too.
    logger: new Logger(() => () => undefined),
    taskList: {
      hook: async (payload, helpers) => {
        if (!config.emit) return;
        const event = payload as { path: string; received_at: number };
        await helpers.addJob("next", { path: event.path, at: event.received_at });
      },
      next: async () => undefined,
    },
  });

  serveBare(config, (event) => runner.addJob("hook", event), () => runner.stop());
}

main().catch((error: unknown) => {
  process.stderr.write(`graphile-worker server failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
