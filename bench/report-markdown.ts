import { fmt, mib, ms, pct, ratio } from "./format";
import { perRoundRatio } from "./goals";
import type { MachineInfo } from "./machine";
import { goalsTable, ratiosSection } from "./report-ratios";
import type { BacklogResults, BenchResults, CaseResult } from "./results";

/** bench/results/RESULTS.md: the summary first, then every round, then memory under load and backlog. */
export function renderMarkdown(results: BenchResults | undefined, backlog: BacklogResults | undefined): string {
  const out: string[] = ["# Benchmark results", ""];
  if (results === undefined) {
    out.push("`npm run bench` has not written results.json yet.", "");
    if (backlog !== undefined) out.push(machineLine(backlog.machine), "");
    out.push(...backlogSection(backlog));
    return out.join("\n");
  }
  const s = results.settings;
  out.push(
    `Taken ${results.startedAt.slice(0, 16).replace("T", " ")} UTC by \`npm run bench\` ` +
      `(${s.rounds} interleaved rounds × ${s.seconds} s per server, ${s.warmupSeconds} s warm-up before each, ${s.connections} connections).`,
    "",
  );
  out.push(machineLine(results.machine), "");
  if (results.busyCoresAtStart > 0.25) {
    out.push(`**Warning:** other processes kept ${fmt(results.busyCoresAtStart, 2)} cores busy just before this run; absolute figures are noisy (ratios, taken within a round, less so).`, "");
  }
  out.push("![requests/s and p99 latency per case](chart.svg)", "");

  out.push(...ratiosSection(results), ...goalsTable(results));

  out.push("## Summary (median over rounds)", "");
  out.push(
    "CPU µs/req is the server's CPU time (all threads, including the time it stays busy after the load finishing queued tasks) per answered request, " +
      "from /proc: it moves less than req/s when something else runs on the machine, and its inverse is the capacity of a saturated core. " +
      "\"bare µs ÷ this\" is that capacity as a ratio to bare node:http.",
    "",
  );
  for (const result of results.cases) out.push(...summaryTable(result));

  out.push("## Every round", "");
  out.push("Ratios are to bare `node:http` in the same round. Server CPU is the share of its core the server used (1 core = 100%); load CPU the same for the load generator — near 100% means the generator, not the server, was the limit. Other CPU is what other programs on the machine used meanwhile (kernel threads and interrupts, such as loopback TCP and disk writeback, are not counted) — a high value on a round means it was disturbed; such a measurement is taken again (up to BENCH_RETRY_DISTURBED times) and the least disturbed attempt kept. " +
      "Busy after is how long the server kept working once the load stopped (its tasks consuming what it had accepted faster than they could); " +
      "the next server is measured only once it is idle, since all servers share one core.", "");
  for (const result of results.cases) out.push(...roundsTable(result));

  if (results.soak.length > 0) {
    out.push(`## Memory at full load`, "");
    out.push(
      "RSS sampled every second during one long run at full load (50 keep-alive connections, 312 B). Early = median over the second sixth of the run " +
        "(after warm-up), late = median over the last sixth. Anonymous memory is the heap and buffers; the rest of RSS is file-mapped pages " +
        "(code, and the embedded store's memory-mapped data file, which grows with the file and which the kernel can drop).",
      "",
    );
    out.push("| server | seconds | req/s | p99 ms | RSS early → late | growth | flat | anonymous early → late | growth | flat | store on disk at the end |");
    out.push("|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|");
    for (const run of results.soak) {
      if (run.skipped !== undefined) {
        out.push(`| ${run.label} | ${run.seconds} | skipped: ${cell(run.skipped)} | | | | | | | | |`);
        continue;
      }
      out.push(
        `| ${run.label} | ${run.seconds} | ${fmt(run.rps)} | ${ms(run.p99Ms)} | ${mib(run.rssEarlyBytes)} → ${mib(run.rssLateBytes)} | ${mib(run.growthBytes)} | ${run.flat ? "yes" : "**no**"} ` +
          `| ${mib(run.rssAnonEarlyBytes)} → ${mib(run.rssAnonLateBytes)} | ${mib(run.anonGrowthBytes)} | ${run.anonFlat ? "yes" : "**no**"} | ${run.diskBytes === undefined ? "–" : mib(run.diskBytes)} |`,
      );
    }
    out.push("");
    for (const run of results.soak) {
      if (run.samples.length === 0) continue;
      const every = Math.max(1, Math.round(run.samples.length / 12));
      const points = run.samples
        .filter((_, i) => i % every === 0)
        .map((p) => `${fmt(p.second)} s: ${fmt(p.rssBytes / 2 ** 20, 0)} (${fmt(p.rssAnonBytes / 2 ** 20, 0)})`);
      out.push(`- ${run.label}, RSS (anonymous) in MiB: ${points.join(", ")}`);
    }
    out.push("");
  }

  out.push(...backlogSection(backlog));
  out.push("Reproduce: `npm ci && npm run bench` (quick: `BENCH_ROUNDS=1 BENCH_SECONDS=2 BENCH_SOAK_SECONDS=10 npm run bench`); backlog: `npm run bench:backlog`. See docs/benchmark.md.", "");
  return out.join("\n");
}

function machineLine(m: MachineInfo): string {
  return (
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.kernel}, Node ${m.node}, autocannon ${m.autocannon}; ` +
    (m.pinned ? "servers pinned to core 0 and the load generator to core 1 with `taskset`" : "**not pinned** (no taskset or one core)") +
    `; durable store on ${m.dataDisk}.`
  );
}

function summaryTable(result: CaseResult): string[] {
  const c = result.case;
  const out = [`### ${c.title}`, "", `Measures ${c.measures}.`, ""];
  out.push("| server | req/s | ÷ bare node | (range over rounds) | p50 ms | p99 ms | p99 ÷ bare | CPU µs/req | bare µs ÷ this | peak RSS | server CPU | load CPU | non-2xx / errors |");
  out.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const s of result.summary) {
    out.push(
      `| ${s.label} | ${fmt(s.medianRps)} | ${ratio(s.medianRatio)} | ${ratio(s.minRatio)}–${ratio(s.maxRatio)} | ${ms(s.medianP50Ms)} | ${ms(s.medianP99Ms)} | ${ratio(s.medianP99Ratio)} | ${fmt(s.medianCpuUsPerRequest, 1)} | ${ratio(s.medianCpuRatio)} | ${mib(s.maxPeakRssBytes)} | ${pct(s.medianServerCpu)} | ${pct(s.medianLoadCpu)} | ${s.non2xx} / ${s.errors} |`,
    );
  }
  const hasBoth = result.summary.some((s) => s.server === "framework-received") && result.summary.some((s) => s.server === "framework-persisted");
  out.push("", `Case id \`${c.id}\`${c.emit ? "; the webhook task emits to a second, no-op task" : "; one task, no emit"}.`, "");
  for (const skip of result.skipped) out.push(`Not measured: ${skip.server} did not start (${cell(skip.reason)}).`, "");
  if (hasBoth) out.push(`ack=persisted ÷ ack=received (median of per-round ratios): ${ratio(perRoundRatio(result, "framework-persisted", "framework-received", "rps"))}.`, "");
  out.push(...postgresLines(result));
  if (result.summary.some((s) => s.server === "framework-received-observed") && result.summary.some((s) => s.server === "framework-received")) {
    out.push(`ack=received with metrics, logs and the tracing API on ÷ the same with them off (median of per-round ratios): ${ratio(perRoundRatio(result, "framework-received-observed", "framework-received", "rps"))}.`, "");
  }
  if (hasBoth && result.summary.some((s) => s.server === "framework-persisted-btree")) {
    out.push(`ack=persisted with the journal off ÷ ack=received: ${ratio(perRoundRatio(result, "framework-persisted-btree", "framework-received", "rps"))}; with it ÷ without it: ${ratio(perRoundRatio(result, "framework-persisted", "framework-persisted-btree", "rps"))}.`, "");
  }
  return out;
}

/** The PostgreSQL servers: ratio to ack=received, and CPU per request of the app and of the database backends. */
function postgresLines(result: CaseResult): string[] {
  const received = result.summary.some((s) => s.server === "framework-received");
  const out: string[] = [];
  for (const s of result.summary) {
    if (s.medianDbCpuUsPerRequest === undefined) continue;
    const vsReceived = received ? `, ÷ ack=received ${ratio(perRoundRatio(result, s.server, "framework-received", "rps"))}` : "";
    out.push(
      `${s.label}: ${fmt(s.medianRps)} req/s${vsReceived}; CPU per request ${fmt(s.medianCpuUsPerRequest, 1)} µs in the app process(es) and ${fmt(s.medianDbCpuUsPerRequest, 1)} µs in its PostgreSQL backends.`,
      "",
    );
  }
  return out;
}

function roundsTable(result: CaseResult): string[] {
  const out = [`### ${result.case.title}`, ""];
  out.push("| round | server | req/s | ÷ bare | p50 ms | p99 ms | p99 ÷ bare | max ms | CPU µs/req | peak RSS | server CPU | load CPU | other CPU | busy after, s |");
  out.push("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const m of result.measurements) {
    out.push(
      `| ${m.round} | ${m.server} | ${fmt(m.rps)} | ${ratio(m.ratio)} | ${ms(m.p50Ms)} | ${ms(m.p99Ms)} | ${ratio(m.p99Ratio)} | ${ms(m.maxMs)} | ${fmt(m.cpuUsPerRequest, 1)}${m.dbCpuUsPerRequest === undefined ? "" : ` + ${fmt(m.dbCpuUsPerRequest, 1)} in PostgreSQL`} | ${mib(m.peakRssBytes)} | ${pct(m.serverCpu)} | ${pct(m.loadCpu)} | ${pct(m.otherCpu)}${m.attempts > 1 ? ` (try ${m.attempts})` : ""} | ${fmt(m.drainSeconds, 1)} |`,
    );
  }
  out.push("");
  return out;
}

function backlogSection(backlog: BacklogResults | undefined): string[] {
  if (backlog === undefined) return ["## Backlog", "", "Not run yet: `npm run bench:backlog` adds it here.", ""];
  const out = ["## Backlog: a task slower than arrivals", ""];
  out.push(
    `Taken ${backlog.startedAt.slice(0, 16).replace("T", " ")} UTC by \`npm run bench:backlog\`. The task sleeps on every event, with concurrency 1, ` +
      "so nearly every accepted event waits in the queue; RSS is read after each step of the fill. RSS splits into anonymous memory " +
        "(the heap, buffers: what a backlog must not grow) and file-mapped pages (code, and the embedded store's memory-mapped data file, " +
        "which the kernel drops under memory pressure).",
    "",
  );
  for (const r of backlog.results) {
    out.push(`### ${r.title}`, "");
    if (r.skipped !== undefined) {
      out.push(`Skipped: ${cell(r.skipped)}`, "");
      continue;
    }
    out.push(`Server: ${r.server}; task ${r.taskDelayMs} ms per event; RSS before the fill ${mib(r.baselineRssBytes)} (anonymous ${mib(r.baselineRssAnonBytes)}); fill took ${fmt(r.seconds, 0)} s.`, "");
    out.push("| events accepted | RSS | anonymous (heap, buffers) | file-mapped | peak RSS | store on disk | fill req/s |", "|---:|---:|---:|---:|---:|---:|---:|");
    for (const step of r.steps) {
      out.push(
        `| ${fmt(step.accepted)} | ${mib(step.rssBytes)} | ${mib(step.rssAnonBytes)} | ${mib(step.rssFileBytes)} | ${mib(step.peakRssBytes)} | ${step.diskBytes === undefined ? "–" : mib(step.diskBytes)} | ${fmt(step.rps)} |`,
      );
    }
    const statuses = Object.entries(r.statuses).map(([code, n]) => `${code}: ${fmt(n)}`).join(", ");
    out.push("", `Answers: ${statuses || "none"}; connection errors: ${r.errors}.`, "");
  }
  return out;
}

/** Text safe inside a markdown table cell or a one-line paragraph. */
function cell(text: string): string {
  return text.replace(/\|/g, "/").replace(/\s+/g, " ").trim();
}
