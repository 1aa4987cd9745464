import { MAIN_CASE, NO_EMIT_CASE } from "./cases";
import type { BenchResults, CaseResult } from "./results";
import { median } from "./stats";

/** One goal checked on one run: a median of per-round ratios against its target. */
export interface GoalCheck {
  /** Case id the goal is checked on ("" for goals outside the cases, such as memory). */
  caseId: string;
  goal: string;
  measured: number;
  target: string;
  met: boolean | undefined;
}

/** The targets, in one place (the goals; docs/benchmark.md repeats them). */
export const TARGETS = {
  /** ack=received req/s ÷ bare node:http, with the emit (main case). */
  receivedVsBareEmit: 0.9,
  /** The same without the emit (one task). */
  receivedVsBareSingle: 0.95,
  /** ack=persisted (embedded store) ÷ ack=received. */
  persistedVsReceived: 0.7,
  /** Metrics, logs and the tracing API on ÷ off. */
  observedVsOff: 0.95,
  /** p99 ÷ bare node:http's p99. */
  p99VsBare: 2,
  /** Intake with a slow task ÷ intake with a no-op task. */
  intakeSlowVsNoop: 0.95,
  /** ack=persisted on PostgreSQL ÷ node:http + pg-boss, on the same database. */
  postgresVsPgBoss: 4,
  /** ack=persisted on PostgreSQL ÷ node:http + graphile-worker, on the same database. */
  postgresVsGraphile: 10,
  /** ack=persisted with the event history on ÷ off, on the embedded store and on PostgreSQL. */
  historyOnVsOff: 0.9,
  /** A task with concurrency { limit: 4, key } over 1,000 keys ÷ the same task without it (embedded, PostgreSQL). */
  keyedVsPlain: 0.8,
  /** One source with three subscribed tasks, each with a filter ÷ the one-task case, ack=received. */
  fanOutReceived: 0.85,
  /** The same with ack=persisted (embedded): one write per event, not per copy. */
  fanOutPersisted: 0.8,
} as const;

/** The event history's cost: each server with it on, and the same server with it off. */
export const HISTORY_PAIRS: ReadonlyArray<{ readonly on: string; readonly off: string; readonly store: string }> = [
  { on: "framework-persisted", off: "framework-persisted-no-history", store: "embedded" },
  { on: "framework-postgres", off: "framework-postgres-no-history", store: "PostgreSQL" },
];

/** Median over rounds of a per-round ratio between two servers of one case. */
export function perRoundRatio(result: CaseResult, top: string, bottom: string, field: "rps" | "p99Ms" | "cpuUsPerRequest"): number {
  const rounds = new Set(result.measurements.map((m) => m.round));
  const values: number[] = [];
  for (const round of rounds) {
    const a = result.measurements.find((m) => m.round === round && m.server === top);
    const b = result.measurements.find((m) => m.round === round && m.server === bottom);
    if (a && b) values.push(a[field] / b[field]);
  }
  return median(values);
}

/** The three ratios the report gives for every case (NaN where a server did not run). */
export interface CaseRatios {
  receivedVsBare: number;
  persistedVsReceived: number;
  observedVsReceived: number;
}

export function caseRatios(result: CaseResult): CaseRatios {
  const ran = (id: string) => result.summary.some((s) => s.server === id);
  const ratio = (top: string, bottom: string) => (ran(top) && ran(bottom) ? perRoundRatio(result, top, bottom, "rps") : NaN);
  return {
    receivedVsBare: ratio("framework-received", "bare-node"),
    persistedVsReceived: ratio("framework-persisted", "framework-received"),
    observedVsReceived: ratio("framework-received-observed", "framework-received"),
  };
}

/** The targets of the per-case ratios; only the two one-source cases carry goals. */
export function caseTargets(caseId: string): Partial<Record<keyof CaseRatios, number>> {
  if (caseId === MAIN_CASE) return { receivedVsBare: TARGETS.receivedVsBareEmit, persistedVsReceived: TARGETS.persistedVsReceived, observedVsReceived: TARGETS.observedVsOff };
  if (caseId === NO_EMIT_CASE) return { receivedVsBare: TARGETS.receivedVsBareSingle, persistedVsReceived: TARGETS.persistedVsReceived, observedVsReceived: TARGETS.observedVsOff };
  return {};
}

const GOAL_NAMES: Record<keyof CaseRatios, string> = {
  receivedVsBare: "ack=received req/s ÷ bare node:http",
  persistedVsReceived: "ack=persisted (embedded) req/s ÷ ack=received",
  observedVsReceived: "ack=received with metrics, logs and tracing API ÷ the same with them off",
};

export function checkGoals(results: BenchResults): GoalCheck[] {
  const checks: GoalCheck[] = [];
  const add = (caseId: string, goal: string, measured: number, target: string, met: (v: number) => boolean) =>
    // "–" marks a figure given for reference, with no goal to meet.
    checks.push({ caseId, goal, measured, target, met: target !== "–" && Number.isFinite(measured) ? met(measured) : undefined });
  for (const result of results.cases) {
    const ratios = caseRatios(result);
    for (const [key, target] of Object.entries(caseTargets(result.case.id)) as [keyof CaseRatios, number][]) {
      if (Number.isFinite(ratios[key])) add(result.case.id, GOAL_NAMES[key], ratios[key], `≥ ${target.toFixed(2)}`, (v) => v >= target);
    }
  }
  const main = results.cases.find((c) => c.case.id === MAIN_CASE);
  if (main !== undefined) mainCaseGoals(main, add);
  for (const intake of results.intake ?? []) {
    add("intake", `${intake.label}: 2xx/s with a ${intake.taskDelayMs} ms task ÷ with a no-op task`, intake.slowVsNoop, `≥ ${TARGETS.intakeSlowVsNoop.toFixed(2)}`, (v) => v >= TARGETS.intakeSlowVsNoop);
  }
  for (const run of results.soak) {
    if (run.skipped === undefined) {
      add("", `${run.server}: RSS growth over ${run.seconds} s at full load (MiB)`, run.growthBytes / 2 ** 20, "flat (< 10% and < 16 MiB)", () => run.flat);
      add("", `${run.server}: anonymous-memory growth over ${run.seconds} s at full load (MiB)`, run.anonGrowthBytes / 2 ** 20, "flat (< 10% and < 16 MiB)", () => run.anonFlat);
    }
  }
  return checks;
}

type Add = (caseId: string, goal: string, measured: number, target: string, met: (v: number) => boolean) => void;

/** Latency, PostgreSQL against what users would pick instead, and the CPU-based figures: main case only. */
function mainCaseGoals(main: CaseResult, add: Add): void {
  const summary = (id: string) => main.summary.find((s) => s.server === id);
  const received = summary("framework-received");
  const persisted = summary("framework-persisted");
  const postgres = summary("framework-postgres");
  const id = main.case.id;
  if (postgres && summary("pgboss")) {
    add(id, "ack=persisted on PostgreSQL req/s ÷ node:http + pg-boss (same database)", perRoundRatio(main, "framework-postgres", "pgboss", "rps"), `≥ ${TARGETS.postgresVsPgBoss}`, (v) => v >= TARGETS.postgresVsPgBoss);
  }
  if (postgres && summary("graphile-worker")) {
    add(id, "ack=persisted on PostgreSQL req/s ÷ node:http + graphile-worker (same database)", perRoundRatio(main, "framework-postgres", "graphile-worker", "rps"), `≥ ${TARGETS.postgresVsGraphile}`, (v) => v >= TARGETS.postgresVsGraphile);
  }
  for (const [keyed, plain, engine] of [["framework-persisted-keyed", "framework-persisted", "embedded"], ["framework-postgres-keyed", "framework-postgres", "PostgreSQL"]] as const) {
    if (summary(keyed) && summary(plain)) {
      add(id, `concurrency { limit: 4, key } over 1,000 keys req/s ÷ the same task without it (${engine})`, perRoundRatio(main, keyed, plain, "rps"), `≥ ${TARGETS.keyedVsPlain.toFixed(2)}`, (v) => v >= TARGETS.keyedVsPlain);
    }
  }
  for (const [fanned, single, mode, target] of [
    ["framework-received-fanout3", "framework-received", "received", TARGETS.fanOutReceived],
    ["framework-persisted-fanout3", "framework-persisted", "persisted (embedded)", TARGETS.fanOutPersisted],
  ] as const) {
    if (summary(fanned) && summary(single)) {
      add(id, `ack=${mode}: 3 tasks with filters on one source req/s ÷ 1 task`, perRoundRatio(main, fanned, single, "rps"), `≥ ${target.toFixed(2)}`, (v) => v >= target);
    }
  }
  if (received && postgres) add(id, "(for reference) ack=persisted on PostgreSQL req/s ÷ ack=received", perRoundRatio(main, "framework-postgres", "framework-received", "rps"), "–", () => true);
  if (received && summary("framework-postgres-x2")) {
    add(id, "(for reference) 2 app processes on PostgreSQL, combined req/s ÷ ack=received", perRoundRatio(main, "framework-postgres-x2", "framework-received", "rps"), "–", () => true);
  }
  for (const pair of HISTORY_PAIRS) {
    if (summary(pair.on) && summary(pair.off)) {
      const target = TARGETS.historyOnVsOff;
      add(id, `ack=persisted (${pair.store}) with the event history on req/s ÷ off`, perRoundRatio(main, pair.on, pair.off, "rps"), `≥ ${target.toFixed(2)}`, (v) => v >= target);
    }
  }
  if (received) add(id, "(for reference) ack=received capacity by CPU per request ÷ bare node:http", received.medianCpuRatio, "–", () => true);
  if (received && persisted) {
    add(id, "(for reference) ack=persisted capacity by CPU per request ÷ ack=received", received.medianCpuUsPerRequest / persisted.medianCpuUsPerRequest, "–", () => true);
  }
  if (received) add(id, "ack=received p99 ÷ bare node:http p99", received.medianP99Ratio, `≤ ${TARGETS.p99VsBare.toFixed(1)}`, (v) => v <= TARGETS.p99VsBare);
  if (persisted) add(id, "ack=persisted p99 ÷ bare node:http p99", persisted.medianP99Ratio, `≤ ${TARGETS.p99VsBare.toFixed(1)}`, (v) => v <= TARGETS.p99VsBare);
}
