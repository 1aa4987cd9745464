import { join } from "node:path";

/** Run settings, all from the environment so that a quick run is one line. */
export interface BenchSettings {
  /** Interleaved rounds per case (BENCH_ROUNDS, default 5). */
  rounds: number;
  /** Measured seconds per server per round (BENCH_SECONDS, default 3). */
  seconds: number;
  /** Unmeasured warm-up before each measurement (BENCH_WARMUP_SECONDS, default 1). */
  warmupSeconds: number;
  /** Case ids to run (BENCH_CASES, comma list; default all). */
  cases: string[] | undefined;
  /** Server ids to run (BENCH_SERVERS, comma list; default all; bare-node always runs). */
  servers: string[] | undefined;
  /** Full-load run checking memory (BENCH_SOAK_SECONDS, default 60; 0 skips it). */
  soakSeconds: number;
  /** Servers of the full-load run (BENCH_SOAK_SERVERS, default both framework modes). */
  soakServers: string[];
  /** Where results are written (BENCH_RESULTS_DIR, default bench/results). */
  resultsDir: string;
  /**
   * On a shared machine: before each measurement, wait up to this long for other work to
   * leave the cores idle (BENCH_QUIET_WAIT_SECONDS, default 0: do not wait).
   */
  quietWaitSeconds: number;
  /**
   * Times a measurement disturbed by other work (over 25% of a core) is taken again
   * (BENCH_RETRY_DISTURBED, default 1).
   */
  retryDisturbed: number;
  /** Most seconds a run spends on such second measurements (BENCH_RETRY_BUDGET_SECONDS, default 60). */
  retryBudgetSeconds: number;
  /**
   * After each measurement, wait up to this long for the server to go idle (finish draining
   * its queue) before the next one (BENCH_DRAIN_WAIT_SECONDS, default 30).
   */
  drainWaitSeconds: number;
  /** Intake with a slow task against a no-op task (BENCH_INTAKE, default 1; 0 skips it). */
  intake: boolean;
  /** How long the slow task sleeps per event in the intake comparison (BENCH_INTAKE_TASK_MS, default 1500). */
  intakeTaskMs: number;
  /** Where durable stores put their files (BENCH_DATA_DIR, default bench/results/tmp: a real disk, not tmpfs). */
  dataDir: string;
}

export const REPO_ROOT = join(__dirname, "..", "..");

function num(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${text}"`);
  return value;
}

function list(name: string): string[] | undefined {
  const text = process.env[name];
  if (text === undefined || text.trim() === "") return undefined;
  return text.split(",").map((s) => s.trim()).filter(Boolean);
}

export function readSettings(): BenchSettings {
  const resultsDir = process.env.BENCH_RESULTS_DIR ?? join(REPO_ROOT, "bench", "results");
  return {
    rounds: Math.max(1, Math.floor(num("BENCH_ROUNDS", 5))),
    seconds: num("BENCH_SECONDS", 3),
    warmupSeconds: num("BENCH_WARMUP_SECONDS", 1),
    cases: list("BENCH_CASES"),
    servers: list("BENCH_SERVERS"),
    soakSeconds: num("BENCH_SOAK_SECONDS", 60),
    soakServers: list("BENCH_SOAK_SERVERS") ?? ["framework-received", "framework-persisted"],
    resultsDir,
    quietWaitSeconds: num("BENCH_QUIET_WAIT_SECONDS", 0),
    drainWaitSeconds: num("BENCH_DRAIN_WAIT_SECONDS", 30),
    retryDisturbed: Math.floor(num("BENCH_RETRY_DISTURBED", 1)),
    retryBudgetSeconds: num("BENCH_RETRY_BUDGET_SECONDS", 60),
    intake: num("BENCH_INTAKE", 1) > 0,
    intakeTaskMs: num("BENCH_INTAKE_TASK_MS", 1500),
    dataDir: process.env.BENCH_DATA_DIR ?? join(resultsDir, "tmp"),
  };
}
