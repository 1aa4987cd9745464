import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BenchCase } from "./cases";
import type { MachineInfo } from "./machine";

/** One server, one round, one case. */
export interface Measurement {
  round: number;
  server: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** VmHWM of the server during this measurement (reset before it where the kernel allows). */
  peakRssBytes: number;
  /** Share of its core the server used while measured (1 = saturated). */
  serverCpu: number;
  /**
   * Server CPU time (all threads, the drain after the load included) per 2xx answer,
   * microseconds: the cost of one event, steadier than req/s when other load is around.
   */
  cpuUsPerRequest: number;
  /** Share of its core the load generator used while measured. */
  loadCpu: number;
  /**
   * PostgreSQL store only: CPU time of the server's database backends (from /proc), per 2xx
   * answer, microseconds, and as a share of a core while measured.
   */
  dbCpuUsPerRequest?: number;
  dbCpu?: number;
  /**
   * CPU used by other programs on the machine while measured, in cores (interrupts and kernel
   * threads such as disk writeback excluded): a high figure means the round was disturbed.
   */
  otherCpu: number;
  /** rps / bare node's rps in the same round. */
  ratio: number;
  /** p99 / bare node's p99 in the same round. */
  p99Ratio: number;
  /** bare node's CPU per request / this server's, same round: the capacity ratio on a saturated core. */
  cpuRatio: number;
  /** Measurements taken (more than 1 when earlier ones were disturbed by other work). */
  attempts: number;
  /**
   * A server with the event history on: the events it held after this measurement and their
   * bytes (the embedded store's add up over the case; PostgreSQL's schema is emptied after each).
   */
  history?: { events: number; bytes: number };
  /**
   * Seconds the server stayed busy after the load stopped (finishing queued tasks and
   * commits): work it had accepted faster than its tasks consumed it.
   */
  drainSeconds: number;
}

export interface ServerSummary {
  server: string;
  label: string;
  rounds: number;
  medianRps: number;
  medianRatio: number;
  /** Lowest and highest per-round ratio: the spread the median hides. */
  minRatio: number;
  maxRatio: number;
  medianP50Ms: number;
  medianP99Ms: number;
  medianP99Ratio: number;
  medianCpuUsPerRequest: number;
  medianCpuRatio: number;
  /** PostgreSQL store only: median database backend CPU per request. */
  medianDbCpuUsPerRequest?: number;
  maxPeakRssBytes: number;
  medianServerCpu: number;
  medianLoadCpu: number;
  maxOtherCpu: number;
  medianDrainSeconds: number;
  non2xx: number;
  errors: number;
}

export interface CaseResult {
  case: BenchCase;
  measurements: Measurement[];
  summary: ServerSummary[];
  /** Servers that did not start, with the reason. */
  skipped: { server: string; reason: string }[];
}


export interface SoakSample {
  second: number;
  rssBytes: number;
  rssAnonBytes: number;
  rssFileBytes: number;
}

export interface SoakResult {
  server: string;
  label: string;
  seconds: number;
  rps: number;
  p99Ms: number;
  ok: number;
  non2xx: number;
  errors: number;
  samples: SoakSample[];
  /** Median RSS over the second sixth of the run (after warm-up). */
  rssEarlyBytes: number;
  /** Median RSS over the last sixth. */
  rssLateBytes: number;
  growthBytes: number;
  /** The same for anonymous memory only (heap, buffers; mapped store pages left out). */
  rssAnonEarlyBytes: number;
  rssAnonLateBytes: number;
  anonGrowthBytes: number;
  /** Size of the store's directory at the end (embedded store). */
  diskBytes?: number;
  /** Flat: grew less than 10% and less than 16 MiB from early to late. */
  flat: boolean;
  anonFlat: boolean;
  skipped?: string;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  machine: MachineInfo;
  settings: { rounds: number; seconds: number; warmupSeconds: number; connections: number };
  /** Cores other processes kept busy in the 2 s before the run (should be near 0). */
  busyCoresAtStart: number;
  cases: CaseResult[];
  soak: SoakResult[];
  /** Intake with a slow task against a no-op task (absent in results written before it existed). */
  intake?: IntakeResult[];
}

/** One round of the intake comparison: the same server freshly started with each task. */
export interface IntakeRound {
  round: number;
  noopRps: number;
  slowRps: number;
  noopP99Ms: number;
  slowP99Ms: number;
  /** Answers other than 2xx with the slow task (a 503 would mean maxQueued was reached). */
  slowNon2xx: number;
  /** Median per-round slowRps ÷ noopRps is the figure; this is the round's. */
  ratio: number;
}

export interface IntakeResult {
  id: string;
  label: string;
  taskDelayMs: number;
  maxQueued: number;
  rounds: IntakeRound[];
  medianNoopRps: number;
  medianSlowRps: number;
  /** Median over rounds of slow ÷ no-op 2xx/s. */
  slowVsNoop: number;
  /** Median over rounds of slow ÷ no-op p99. */
  p99SlowVsNoop: number;
  skipped?: string;
}

export interface BacklogStep {
  /** Events accepted (2xx) so far. */
  accepted: number;
  rssBytes: number;
  peakRssBytes: number;
  /** Of rssBytes, private memory (heap, buffers): what a backlog must not grow. */
  rssAnonBytes: number;
  /** Of rssBytes, mapped file pages (the embedded store's data file among them; reclaimable by the kernel). */
  rssFileBytes: number;
  /** Bytes the store's directory holds (durable store only). */
  diskBytes?: number;
  /** Accepted per second while this step was sent. */
  rps: number;
}

export interface BacklogResult {
  id: string;
  title: string;
  server: string;
  taskDelayMs: number;
  target: number;
  baselineRssBytes: number;
  baselineRssAnonBytes: number;
  steps: BacklogStep[];
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  skipped?: string;
}

export interface BacklogResults {
  startedAt: string;
  finishedAt: string;
  machine: MachineInfo;
  results: BacklogResult[];
}

export const RESULTS_JSON = "results.json";
export const BACKLOG_JSON = "backlog.json";

export function writeJson(dir: string, name: string, value: unknown): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
}

export function readJson<T>(dir: string, name: string): T | undefined {
  const file = join(dir, name);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as T;
}
