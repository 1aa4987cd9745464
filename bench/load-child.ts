import { closeLoad } from "./load-close";
import type { LoadJob, LoadResult } from "./load-job";
import { keepAliveLoad } from "./load-keep-alive";

/**
 * The load generator process (pinned to its own core by load.ts): takes jobs over IPC, one at
 * a time, and answers each with its result.
 */
type Reply = { ok: true; result: LoadResult } | { ok: false; error: string };

process.on("message", (job: LoadJob) => {
  const run = job.keepAlive ? keepAliveLoad(job) : closeLoad(job);
  run.then(
    (result) => process.send!({ ok: true, result } satisfies Reply),
    (error: unknown) => process.send!({ ok: false, error: error instanceof Error ? error.stack ?? error.message : String(error) } satisfies Reply),
  );
});
process.on("disconnect", () => process.exit(0));
