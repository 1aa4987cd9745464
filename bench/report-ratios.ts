import { MAIN_CASE } from "./cases";
import { fmt, ms, ratio } from "./format";
import { caseRatios, caseTargets, checkGoals, HISTORY_PAIRS, perRoundRatio, TARGETS, type CaseRatios } from "./goals";
import type { BenchResults } from "./results";
import { median } from "./stats";

/**
 * The headline of RESULTS.md (and the table docs/benchmark.md copies): per case, the three
 * ratios the goals are about, then intake with a slow task, then PostgreSQL against the job
 * queues users would pick instead.
 */
export function ratiosSection(results: BenchResults, heading = "##"): string[] {
  const out = [`${heading} Ratios per case (medians of per-round ratios)`, ""];
  out.push(
    "received ÷ bare: `ack: \"received\"` (memory store) against bare `node:http` doing the same work; persisted ÷ received: `ack: \"persisted\"` " +
      "(embedded store) against `ack: \"received\"`; observed ÷ off: `ack: \"received\"` with metrics, refusal logs and the tracing API on against the same with them off. " +
      "Targets in parentheses where a goal applies.",
    "",
  );
  out.push("| case | received ÷ bare | persisted ÷ received | observed ÷ off |", "|---|---:|---:|---:|");
  for (const result of results.cases) {
    const r = caseRatios(result);
    const t = caseTargets(result.case.id);
    const cellOf = (key: keyof CaseRatios) => `${ratio(r[key])}${t[key] === undefined ? "" : ` (≥ ${t[key]!.toFixed(2)})`}`;
    out.push(`| ${result.case.title} | ${cellOf("receivedVsBare")} | ${cellOf("persistedVsReceived")} | ${cellOf("observedVsReceived")} |`);
  }
  out.push("");
  out.push(...historyLines(results, heading), ...intakeLines(results, heading), ...alternativesLines(results, heading));
  return out;
}

/** The event history's cost in the main case: req/s with it on ÷ off, side by side, and the bytes it keeps per event. */
function historyLines(results: BenchResults, heading: string): string[] {
  const main = results.cases.find((c) => c.case.id === MAIN_CASE);
  if (main === undefined) return [];
  const summary = (id: string) => main.summary.find((s) => s.server === id);
  const pairs = HISTORY_PAIRS.filter((p) => summary(p.on) !== undefined && summary(p.off) !== undefined);
  if (pairs.length === 0) return [];
  const out = [`${heading} Event history: what keeping it costs`, "", `Case: ${main.case.title}.`, ""];
  out.push(
    "`ack: \"persisted\"` with the event history on (every event, emitted value and run noted in the store's history, in the background) against the same server with it off, " +
      `side by side in each round. Target on ÷ off ≥ ${TARGETS.historyOnVsOff.toFixed(2)}. Bytes per event: the history's size after each measurement (its notes written) ÷ the events it held, ` +
      "webhook events and emitted values alike (two a request in this shape); the median over measurements.",
    "",
  );
  out.push(
    "\"By CPU\" is CPU time per request with the history off ÷ on (the app's process and, on PostgreSQL, its database backends): the capacity ratio on saturated cores, " +
      "steadier than req/s when other work shares the machine (for reference; the goal is on req/s).",
    "",
  );
  out.push("| store | history on, req/s | off, req/s | on ÷ off (rounds' median) | target | by CPU | p99 ms on / off | CPU µs/req on / off | bytes per event |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  const cpu = (x: NonNullable<ReturnType<typeof summary>>) => x.medianCpuUsPerRequest + (x.medianDbCpuUsPerRequest ?? 0);
  for (const pair of pairs) {
    const on = summary(pair.on)!;
    const off = summary(pair.off)!;
    const perEvent = median(main.measurements.filter((m) => m.server === pair.on && m.history !== undefined && m.history.events > 0).map((m) => m.history!.bytes / m.history!.events));
    out.push(
      `| ${pair.store} | ${fmt(on.medianRps)} | ${fmt(off.medianRps)} | **${ratio(perRoundRatio(main, pair.on, pair.off, "rps"))}** | ≥ ${TARGETS.historyOnVsOff.toFixed(2)} | ${ratio(cpu(off) / cpu(on))} | ` +
        `${ms(on.medianP99Ms)} / ${ms(off.medianP99Ms)} | ${fmt(on.medianCpuUsPerRequest, 1)} / ${fmt(off.medianCpuUsPerRequest, 1)} | ${fmt(perEvent)} |`,
    );
  }
  out.push("");
  return out;
}

function intakeLines(results: BenchResults, heading: string): string[] {
  const intake = results.intake ?? [];
  if (intake.length === 0) return [];
  const out = [`${heading} Intake with a slow task`, ""];
  out.push(
    `The main case's server started fresh for every measurement, once with a no-op task and once with a task that sleeps ${intake[0]!.taskDelayMs} ms per event ` +
      `(maxQueued ${fmt(intake[0]!.maxQueued)}, so the backlog never answers 503); rounds alternate which goes first. The answer must not slow down: target slow ÷ no-op ≥ ${TARGETS.intakeSlowVsNoop.toFixed(2)}.`,
    "",
  );
  out.push("| server | no-op task, 2xx/s | slow task, 2xx/s | slow ÷ no-op (rounds) | p99 slow ÷ no-op | non-2xx with the slow task |", "|---|---:|---:|---:|---:|---:|");
  for (const r of intake) {
    if (r.skipped !== undefined) {
      out.push(`| ${r.label} | skipped: ${r.skipped.replace(/\|/g, "/")} | | | | |`);
      continue;
    }
    const each = r.rounds.map((x) => ratio(x.ratio)).join(", ");
    out.push(`| ${r.label} | ${fmt(r.medianNoopRps)} | ${fmt(r.medianSlowRps)} | **${ratio(r.slowVsNoop)}** (${each}) | ${ratio(r.p99SlowVsNoop)} | ${r.rounds.reduce((n, x) => n + x.slowNon2xx, 0)} |`);
  }
  out.push("");
  return out;
}

/** PostgreSQL: our store against node:http with pg-boss or graphile-worker, same database, main case. */
function alternativesLines(results: BenchResults, heading: string): string[] {
  const main = results.cases.find((c) => c.case.id === MAIN_CASE);
  if (main === undefined) return [];
  const summary = (id: string) => main.summary.find((s) => s.server === id);
  const ours = summary("framework-postgres");
  const others = [summary("pgboss"), summary("graphile-worker")].filter((s) => s !== undefined);
  if (ours === undefined || others.length === 0) return [];
  const out = [`${heading} PostgreSQL against what users would pick instead`, "", `Case: ${main.case.title}.`, ""];
  out.push("Each on the same PostgreSQL, a schema of its own, answering 202 only once the event is committed; a worker consumes in the same process.", "");
  out.push(
    "\"By CPU\" is this server's CPU time per request (its process and its database backends) ÷ ours: the capacity ratio on saturated cores, " +
      "steadier than req/s when other work shares the machine (for reference; the goal is on req/s).",
    "",
  );
  out.push("| server | req/s | ours ÷ this (rounds' median) | target | by CPU | p99 ms | CPU µs/req, app | CPU µs/req, PostgreSQL |", "|---|---:|---:|---:|---:|---:|---:|---:|");
  const cpu = (x: typeof ours) => x.medianCpuUsPerRequest + (x.medianDbCpuUsPerRequest ?? NaN);
  out.push(`| ${ours.label} | ${fmt(ours.medianRps)} | 1 | | 1 | ${ms(ours.medianP99Ms)} | ${fmt(ours.medianCpuUsPerRequest, 1)} | ${fmt(ours.medianDbCpuUsPerRequest ?? NaN, 1)} |`);
  for (const s of others) {
    const target = s.server === "pgboss" ? TARGETS.postgresVsPgBoss : TARGETS.postgresVsGraphile;
    out.push(
      `| ${s.label} | ${fmt(s.medianRps)} | **${ratio(perRoundRatio(main, "framework-postgres", s.server, "rps"))}** | ≥ ${target} | ${ratio(cpu(s) / cpu(ours))} | ${ms(s.medianP99Ms)} | ` +
        `${fmt(s.medianCpuUsPerRequest, 1)} | ${fmt(s.medianDbCpuUsPerRequest ?? NaN, 1)} |`,
    );
  }
  out.push("");
  return out;
}

/** Every goal of the run, met or not. */
export function goalsTable(results: BenchResults, heading = "##"): string[] {
  const goals = checkGoals(results);
  if (goals.length === 0) return [];
  const out = [`${heading} Goals (medians of per-round ratios)`, "", "| case | goal | measured | target | met |", "|---|---|---:|---|---|"];
  for (const g of goals) out.push(`| ${g.caseId || "–"} | ${g.goal} | ${ratio(g.measured)} | ${g.target} | ${g.met === undefined ? "–" : g.met ? "yes" : "**no**"} |`);
  out.push("");
  return out;
}
