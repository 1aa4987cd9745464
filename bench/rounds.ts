import type { BenchCase } from "./cases";
import type { LoadGenerator } from "./load";
import { cpuSecondsOf, machineBusySeconds, memoryOf, resetPeak } from "./proc-stats";
import type { CaseResult, Measurement, ServerSummary } from "./results";
import type { RunningServer } from "./servers/launch";
import type { BenchSettings } from "./settings";
import { max, median } from "./stats";

/**
 * Runs one case over several rounds, the servers interleaved within each round (A, B, C, A,
 * B, C, ...) so that drift of the machine (thermal, noisy neighbours, page cache) touches all
 * of them alike; ratios are taken against bare node:http of the same round.
 */
export async function runRounds(
  benchCase: BenchCase,
  servers: readonly RunningServer[],
  load: LoadGenerator,
  settings: BenchSettings,
  log: (line: string) => void,
): Promise<CaseResult> {
  const measurements: Measurement[] = [];
  for (let round = 1; round <= settings.rounds; round++) {
    const inRound: Measurement[] = [];
    for (const server of servers) {
      const m = await measure(benchCase, server, load, settings, round);
      inRound.push(m);
      log(
        `  ${benchCase.id} round ${round}/${settings.rounds} ${server.kind.id.padEnd(20)} ` +
          `${m.rps.toFixed(0).padStart(7)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms  ` +
          `peak RSS ${(m.peakRssBytes / 2 ** 20).toFixed(1)} MiB  CPU server ${(m.serverCpu * 100).toFixed(0)}% load ${(m.loadCpu * 100).toFixed(0)}% other ${(m.otherCpu * 100).toFixed(0)}%` +
          (m.non2xx || m.errors ? `  non-2xx ${m.non2xx} errors ${m.errors}` : ""),
      );
    }
    const base = inRound.find((m) => servers.find((s) => s.kind.id === m.server)?.kind.baseline);
    for (const m of inRound) {
      m.ratio = base ? m.rps / base.rps : NaN;
      m.p99Ratio = base ? m.p99Ms / base.p99Ms : NaN;
    }
    measurements.push(...inRound);
  }
  return { case: benchCase, measurements, summary: summarize(servers, measurements), skipped: [] };
}

async function measure(benchCase: BenchCase, server: RunningServer, load: LoadGenerator, settings: BenchSettings, round: number): Promise<Measurement> {
  resetPeak(server.pid);
  const cpuBefore = cpuSecondsOf(server.pid);
  const loadBefore = cpuSecondsOf(load.pid);
  const busyBefore = machineBusySeconds();
  const wallBefore = process.hrtime.bigint();
  const result = await load.run({
    port: server.port,
    paths: server.paths,
    bodyBytes: benchCase.bodyBytes,
    connections: benchCase.connections,
    keepAlive: benchCase.keepAlive,
    seconds: settings.seconds,
    warmupSeconds: settings.warmupSeconds,
  });
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const cpuAfter = cpuSecondsOf(server.pid);
  const ours = cpuAfter - cpuBefore + (cpuSecondsOf(load.pid) - loadBefore);
  const otherCpu = Math.max(0, (machineBusySeconds() - busyBefore - ours) / wall);
  const memory = memoryOf(server.pid);
  // Let the server finish what it queued (tasks, group commits) before the next one is measured.
  await new Promise((resolve) => setTimeout(resolve, 300));
  return {
    round,
    server: server.kind.id,
    rps: result.rps,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    meanMs: result.meanMs,
    maxMs: result.maxMs,
    ok: result.ok,
    non2xx: result.non2xx,
    errors: result.errors,
    peakRssBytes: memory.peakRss,
    serverCpu: (cpuAfter - cpuBefore) / wall,
    otherCpu,
    loadCpu: result.loadCpuSeconds / result.seconds,
    ratio: NaN,
    p99Ratio: NaN,
  };
}

function summarize(servers: readonly RunningServer[], measurements: readonly Measurement[]): ServerSummary[] {
  return servers.map((server) => {
    const own = measurements.filter((m) => m.server === server.kind.id);
    return {
      server: server.kind.id,
      label: server.kind.label,
      rounds: own.length,
      medianRps: median(own.map((m) => m.rps)),
      medianRatio: median(own.map((m) => m.ratio)),
      medianP50Ms: median(own.map((m) => m.p50Ms)),
      medianP99Ms: median(own.map((m) => m.p99Ms)),
      medianP99Ratio: median(own.map((m) => m.p99Ratio)),
      maxPeakRssBytes: max(own.map((m) => m.peakRssBytes)),
      medianServerCpu: median(own.map((m) => m.serverCpu)),
      medianLoadCpu: median(own.map((m) => m.loadCpu)),
      maxOtherCpu: max(own.map((m) => m.otherCpu)),
      non2xx: own.reduce((n, m) => n + m.non2xx, 0),
      errors: own.reduce((n, m) => n + m.errors, 0),
    };
  });
}
