import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CASES, CONNECTIONS, pathsFor, type BenchCase } from "./cases";
import { measureIntake } from "./intake";
import { LoadGenerator } from "./load";
import { describeMachine } from "./machine";
import { busyCores } from "./quiet";
import { renderMarkdown } from "./report-markdown";
import { renderSvg } from "./report-svg";
import { BACKLOG_JSON, readJson, RESULTS_JSON, writeJson, type BacklogResults, type BenchResults, type CaseResult } from "./results";
import { runRounds } from "./rounds";
import { ALL_SERVERS, type ServerKind } from "./servers/catalog";
import { launch, type RunningServer } from "./servers/launch";
import { readSettings } from "./settings";
import { soak } from "./soak";

/**
 * `npm run bench`: every case against every server, servers side by side on the server core,
 * the load generator on the other core, rounds interleaved; then the full-load memory run;
 * then the report (results.json, RESULTS.md, chart.svg in bench/results).
 */
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const settings = readSettings();
  const runDir = join(settings.dataDir, `run-${process.pid}-${Date.now()}`);
  mkdirSync(runDir, { recursive: true });
  const machine = describeMachine(runDir);
  const kinds = ALL_SERVERS.filter((k) => k.baseline || (settings.servers === undefined && !k.optIn) || settings.servers?.includes(k.id));
  const cases = CASES.filter((c) => settings.cases === undefined || settings.cases.includes(c.id));
  const results: BenchResults = {
    startedAt: new Date().toISOString(),
    finishedAt: "",
    machine,
    settings: { rounds: settings.rounds, seconds: settings.seconds, warmupSeconds: settings.warmupSeconds, connections: CONNECTIONS },
    busyCoresAtStart: NaN,
    cases: [],
    soak: [],
  };
  results.busyCoresAtStart = await busyCores(2000);
  if (results.busyCoresAtStart > 0.25) log(`warning: the machine was already busy (${results.busyCoresAtStart.toFixed(2)} cores used by others) — figures will be noisy`);
  log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.kernel}, node ${machine.node}, pinned: ${machine.pinned}, data on ${machine.dataDisk}`);
  log(`servers: ${kinds.map((k) => k.id).join(", ")}; ${settings.rounds} rounds x ${settings.seconds} s (+${settings.warmupSeconds} s warm-up)`);

  const load = new LoadGenerator();
  try {
    for (const group of groupByServerShape(cases)) {
      const inGroup = kinds.filter((k) => k.cases === undefined || group.some((c) => k.cases!.includes(c.id)));
      const { servers, skipped } = await startAll(inGroup, group[0]!, runDir);
      try {
        for (const benchCase of group) {
          log(`case ${benchCase.id}: ${benchCase.title}`);
          const inCase = servers.filter((s) => s.kind.cases === undefined || s.kind.cases.includes(benchCase.id));
          const result: CaseResult = await runRounds(benchCase, inCase, load, settings, log);
          result.skipped = skipped;
          results.cases.push(result);
          save(settings.resultsDir, results);
        }
      } finally {
        await Promise.all(servers.map((s) => s.stop()));
      }
    }
    if (settings.intake) {
      results.intake = await measureIntake(load, settings, runDir, log);
      save(settings.resultsDir, results);
    }
    if (settings.soakSeconds > 0) {
      for (const kind of ALL_SERVERS.filter((k) => settings.soakServers.includes(k.id))) {
        log(`full-load run: ${kind.id} for ${settings.soakSeconds} s`);
        try {
          const result = await soak(kind, load, settings, join(runDir, `soak-${kind.id}`));
          log(
            `  ${result.rps.toFixed(0)} req/s, RSS ${(result.rssEarlyBytes / 2 ** 20).toFixed(1)} -> ${(result.rssLateBytes / 2 ** 20).toFixed(1)} MiB` +
              ` (${result.flat ? "flat" : "GROWING"}), anonymous ${(result.rssAnonEarlyBytes / 2 ** 20).toFixed(1)} -> ${(result.rssAnonLateBytes / 2 ** 20).toFixed(1)} MiB` +
              ` (${result.anonFlat ? "flat" : "GROWING"})` + (result.diskBytes !== undefined ? `, store ${(result.diskBytes / 2 ** 20).toFixed(0)} MiB on disk` : ""),
          );
          results.soak.push(result);
        } catch (error) {
          log(`  skipped: ${firstLine(error)}`);
          results.soak.push({ server: kind.id, label: kind.label, seconds: settings.soakSeconds, rps: NaN, p99Ms: NaN, ok: 0, non2xx: 0, errors: 0, samples: [], rssEarlyBytes: NaN, rssLateBytes: NaN, growthBytes: NaN, rssAnonEarlyBytes: NaN, rssAnonLateBytes: NaN, anonGrowthBytes: NaN, flat: false, anonFlat: false, skipped: firstLine(error) });
        }
      }
    }
  } finally {
    load.close();
    rmSync(runDir, { recursive: true, force: true });
  }
  results.finishedAt = new Date().toISOString();
  save(settings.resultsDir, results);
  log(`wrote ${join(settings.resultsDir, "RESULTS.md")} and chart.svg; \`npm run bench:docs\` puts these figures in docs/benchmark.md`);
}

/** Cases that can share started servers (same sources, same task shape), in the cases' order. */
function groupByServerShape(cases: readonly BenchCase[]): BenchCase[][] {
  const groups = new Map<string, BenchCase[]>();
  for (const c of cases) {
    const key = `${c.sources}:${c.emit}`;
    groups.set(key, [...(groups.get(key) ?? []), c]);
  }
  return [...groups.values()];
}

/** Starts every server of a group side by side; one that fails to start is reported, not fatal. */
async function startAll(kinds: readonly ServerKind[], shape: BenchCase, runDir: string) {
  const servers: RunningServer[] = [];
  const skipped: { server: string; reason: string }[] = [];
  for (const kind of kinds) {
    try {
      const dataDir = join(runDir, `${kind.id}-${shape.sources}-${shape.emit ? "emit" : "single"}`);
      servers.push(await launch(kind, { paths: pathsFor(shape.sources), port: 0, dataDir, emit: shape.emit }));
    } catch (error) {
      if (kind.baseline) throw error;
      log(`  ${kind.id} did not start: ${firstLine(error)}`);
      skipped.push({ server: kind.id, reason: firstLine(error) });
    }
  }
  return { servers, skipped };
}

function save(dir: string, results: BenchResults): void {
  writeJson(dir, RESULTS_JSON, results);
  const backlog = readJson<BacklogResults>(dir, BACKLOG_JSON);
  writeFileSync(join(dir, "RESULTS.md"), renderMarkdown(results, backlog));
  writeFileSync(join(dir, "chart.svg"), renderSvg(results));
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split("\n").filter(Boolean).slice(0, 3).join(" | ");
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
