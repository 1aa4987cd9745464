import type { BenchResults, CaseResult } from "./results";
import { median } from "./stats";

/** The goals, checked on the main case (one source, 312 B, keep-alive, 50 connections). */
export interface GoalCheck {
  goal: string;
  measured: number;
  target: string;
  met: boolean | undefined;
}

const MAIN_CASE = "one-source";

/** Median over rounds of a per-round ratio between two servers of one case. */
export function perRoundRatio(result: CaseResult, top: string, bottom: string, field: "rps" | "p99Ms"): number {
  const rounds = new Set(result.measurements.map((m) => m.round));
  const values: number[] = [];
  for (const round of rounds) {
    const a = result.measurements.find((m) => m.round === round && m.server === top);
    const b = result.measurements.find((m) => m.round === round && m.server === bottom);
    if (a && b) values.push(a[field] / b[field]);
  }
  return median(values);
}

export function checkGoals(results: BenchResults): GoalCheck[] {
  const main = results.cases.find((c) => c.case.id === MAIN_CASE);
  if (main === undefined) return [];
  const summary = (id: string) => main.summary.find((s) => s.server === id);
  const checks: GoalCheck[] = [];
  const received = summary("framework-received");
  const persisted = summary("framework-persisted");
  const add = (goal: string, measured: number, target: string, met: (v: number) => boolean) =>
    checks.push({ goal, measured, target, met: Number.isFinite(measured) ? met(measured) : undefined });
  if (received) add("ack=received req/s ÷ bare node:http", received.medianRatio, "≥ 0.80", (v) => v >= 0.8);
  if (received && persisted) {
    add("ack=persisted req/s ÷ ack=received", perRoundRatio(main, "framework-persisted", "framework-received", "rps"), "≥ 0.60", (v) => v >= 0.6);
  }
  if (received && summary("framework-received-observed")) {
    add("ack=received with metrics, logs and tracing API ÷ the same with them off", perRoundRatio(main, "framework-received-observed", "framework-received", "rps"), "≥ 0.95", (v) => v >= 0.95);
  }
  if (received) add("(for reference) ack=received capacity by CPU per request ÷ bare node:http", received.medianCpuRatio, "≥ 0.80", (v) => v >= 0.8);
  if (received && persisted) {
    const cpu = received.medianCpuUsPerRequest / persisted.medianCpuUsPerRequest;
    add("(for reference) ack=persisted capacity by CPU per request ÷ ack=received", cpu, "≥ 0.60", (v) => v >= 0.6);
  }
  if (received && summary("framework-postgres")) {
    add("ack=persisted on PostgreSQL req/s ÷ ack=received", perRoundRatio(main, "framework-postgres", "framework-received", "rps"), "≥ 0.35", (v) => v >= 0.35);
  }
  if (received && summary("framework-postgres-x2")) {
    add("(for reference) 2 app processes on PostgreSQL, combined req/s ÷ ack=received", perRoundRatio(main, "framework-postgres-x2", "framework-received", "rps"), "–", () => true);
  }
  if (received) add("ack=received p99 ÷ bare node:http p99", received.medianP99Ratio, "≤ 2.0", (v) => v <= 2);
  if (persisted) add("ack=persisted p99 ÷ bare node:http p99", persisted.medianP99Ratio, "≤ 2.0", (v) => v <= 2);
  for (const run of results.soak) {
    if (run.skipped === undefined) {
      add(`${run.server}: RSS growth over ${run.seconds} s at full load (MiB)`, run.growthBytes / 2 ** 20, "flat (< 10% and < 16 MiB)", () => run.flat);
      add(`${run.server}: anonymous-memory growth over ${run.seconds} s at full load (MiB)`, run.anonGrowthBytes / 2 ** 20, "flat (< 10% and < 16 MiB)", () => run.anonFlat);
    }
  }
  return checks;
}
