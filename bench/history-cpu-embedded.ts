/**
 * CPU per request of the embedded store's history alone, without HTTP, queues or tasks: the
 * notes of the bench's main case (a 312-byte webhook whose task emits to a second task: two
 * events and two runs per request) fed at RATE requests a second for SECONDS, counted with
 * process.cpuUsage (every thread: lmdb's writer and the GC's helpers too), on the main thread
 * and on the others. Less noisy than the whole server on a busy machine. Run:
 * `npm run build && node dist/bench/history-cpu-embedded.js` (RATE, SECONDS, DIR).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedHistory } from "../src/store/embedded/history/embedded-history";
import { silentLogger } from "../src/util/logger";
import { measureHistoryCpu } from "./history-cpu";
import { REPO_ROOT } from "./settings";

async function main(): Promise<void> {
  const dir = mkdtempSync(join(process.env.DIR ?? join(REPO_ROOT, "bench", "results"), "history-cpu-"));
  let open = true;
  const history = new EmbeddedHistory({ dir, logger: silentLogger, isOpen: () => open, requireOpen: () => undefined });
  try {
    await measureHistoryCpu(history, Number(process.env.RATE ?? 9_000), Number(process.env.SECONDS ?? 6));
  } finally {
    open = false;
    await history.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
