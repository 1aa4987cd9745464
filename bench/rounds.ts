import type { BenchCase } from "./cases";
import type { LoadGenerator } from "./load";
import { cpuSecondsOf, cpuSecondsOfAll, userProcessSeconds, memoryOf, resetPeak } from "./proc-stats";
import { waitForQuiet } from "./quiet";
import type { CaseResult, Measurement, ServerSummary } from "./results";
import type { RunningServer } from "./servers/launch";
import type { BenchSettings } from "./settings";
import { max, median, min } from "./stats";

/** Other work using more than this share of a core during a measurement disturbs it. */
export const DISTURBED = 0.25;

/** Seconds spent measuring again so far in this run (bounded by BENCH_RETRY_BUDGET_SECONDS). */
const retryBudget = { spent: 0 };

/**
 * Runs one case over several rounds, the servers interleaved within each round so that drift
 * of the machine (thermal, noisy neighbours, page cache) touches all of them alike; ratios are
 * taken against bare node:http of the same round. Every other round runs them in reverse
 * (A, B, C, C, B, A, ...): a server measured right after another shares its core with that
 * one's leftover work (a full GC of the heap it just filled comes seconds later), so no server
 * may always be the one that follows the same neighbour.
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
    for (const server of round % 2 === 1 ? servers : [...servers].reverse()) {
      let m = await measure(benchCase, server, load, settings, round);
      // On a shared machine, a measurement during someone else's burst is taken again (the
      // least disturbed attempt is kept, and the report shows how disturbed it was).
      for (let retry = 1; retry <= settings.retryDisturbed && m.otherCpu > DISTURBED && retryBudget.spent < settings.retryBudgetSeconds; retry++) {
        const began = Date.now();
        log(`  ${benchCase.id} round ${round}/${settings.rounds} ${server.kind.id}: disturbed (other CPU ${(m.otherCpu * 100).toFixed(0)}%), measuring again`);
        const again = await measure(benchCase, server, load, settings, round);
        again.attempts = m.attempts + 1;
        if (again.otherCpu < m.otherCpu) m = again;
        else m.attempts = again.attempts;
        retryBudget.spent += (Date.now() - began) / 1000;
      }
      inRound.push(m);
      log(
        `  ${benchCase.id} round ${round}/${settings.rounds} ${server.kind.id.padEnd(20)} ` +
          `${m.rps.toFixed(0).padStart(7)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  p99 ${m.p99Ms.toFixed(2)} ms  ` +
          `peak RSS ${(m.peakRssBytes / 2 ** 20).toFixed(1)} MiB  CPU server ${(m.serverCpu * 100).toFixed(0)}% (${m.cpuUsPerRequest.toFixed(1)} µs/req)` +
          (m.dbCpuUsPerRequest !== undefined ? ` PostgreSQL ${((m.dbCpu ?? 0) * 100).toFixed(0)}% (${m.dbCpuUsPerRequest.toFixed(1)} µs/req)` : "") +
          ` load ${(m.loadCpu * 100).toFixed(0)}% other ${(m.otherCpu * 100).toFixed(0)}%` +
          (m.drainSeconds > 1 ? `  busy ${m.drainSeconds.toFixed(1)} s after the load` : "") +
          (m.non2xx || m.errors ? `  non-2xx ${m.non2xx} errors ${m.errors}` : ""),
      );
    }
    const base = inRound.find((m) => servers.find((s) => s.kind.id === m.server)?.kind.baseline);
    for (const m of inRound) {
      m.ratio = base ? m.rps / base.rps : NaN;
      m.p99Ratio = base ? m.p99Ms / base.p99Ms : NaN;
      m.cpuRatio = base ? base.cpuUsPerRequest / m.cpuUsPerRequest : NaN;
    }
    measurements.push(...inRound);
  }
  return { case: benchCase, measurements, summary: summarize(servers, measurements), skipped: [] };
}

async function measure(benchCase: BenchCase, server: RunningServer, load: LoadGenerator, settings: BenchSettings, round: number): Promise<Measurement> {
  if (settings.quietWaitSeconds > 0) await waitForQuiet(settings.quietWaitSeconds);
  const job = {
    port: server.port,
    paths: server.paths,
    bodyBytes: benchCase.bodyBytes,
    connections: benchCase.connections,
    keepAlive: benchCase.keepAlive,
  };
  for (const pid of server.pids) resetPeak(pid);
  if (settings.warmupSeconds > 0) await load.run({ ...job, seconds: settings.warmupSeconds });
  // CPU figures cover the measured part only, so CPU per request is exact.
  const backends = (await server.database?.backendPids()) ?? [];
  const dbBefore = cpuByPid(backends);
  const cpuBefore = cpuSecondsOfAll(server.pids);
  const loadBefore = cpuSecondsOf(load.pid);
  const busyBefore = userProcessSeconds();
  const wallBefore = process.hrtime.bigint();
  const result = await load.run({ ...job, seconds: settings.seconds });
  const wall = Number(process.hrtime.bigint() - wallBefore) / 1e9;
  const serverCpuSeconds = cpuSecondsOfAll(server.pids) - cpuBefore;
  // Backends opened during the load (the pool grows on demand) count from their start.
  const backendsAfter = [...new Set([...backends, ...((await server.database?.backendPids()) ?? [])])];
  const dbSeconds = cpuSince(dbBefore, backendsAfter);
  const ours = serverCpuSeconds + dbSeconds + (cpuSecondsOf(load.pid) - loadBefore);
  const otherCpu = Math.max(0, (userProcessSeconds() - busyBefore - ours) / wall);
  // Several app processes: the sum of their peaks (an upper bound of their peak together).
  const memory = { peakRss: server.pids.reduce((sum, pid) => sum + memoryOf(pid).peakRss, 0) };
  // The next server shares this core: wait until this one has finished what it queued (its
  // task runner draining a backlog, group commits) so that it does not disturb the next.
  const drainSeconds = await waitForIdle(server.pids, settings.drainWaitSeconds);
  // CPU per request counts the drain too: work deferred past the load is still work per event.
  const totalCpuSeconds = cpuSecondsOfAll(server.pids) - cpuBefore;
  const totalDbSeconds = cpuSince(dbBefore, backendsAfter);
  // The event history's size, once its notes are written: before the schema is emptied.
  const history = await server.historySize();
  // Each measurement starts on an empty schema, as the other stores start on an empty queue.
  await server.database?.empty();
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
    serverCpu: serverCpuSeconds / wall,
    cpuUsPerRequest: result.ok > 0 ? (totalCpuSeconds / result.ok) * 1e6 : NaN,
    ...(server.database === undefined ? {} : { dbCpuUsPerRequest: result.ok > 0 ? (totalDbSeconds / result.ok) * 1e6 : NaN, dbCpu: dbSeconds / wall }),
    otherCpu,
    ...(history === undefined ? {} : { history }),
    loadCpu: result.loadCpuSeconds / result.seconds,
    ratio: NaN,
    p99Ratio: NaN,
    cpuRatio: NaN,
    attempts: 1,
    drainSeconds,
  };
}

/**
 * Waits until a process uses less than 5% of a core over a quarter second (at most
 * `maxSeconds`); returns how long that took.
 */
/** CPU seconds of each process now (processes gone are left out). */
function cpuByPid(pids: readonly number[]): Map<number, number> {
  return new Map(pids.map((pid) => [pid, cpuSecondsOfAll([pid])]));
}

/** CPU seconds `pids` used since `before` was taken; a process not in `before` counts from its start. */
function cpuSince(before: ReadonlyMap<number, number>, pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) total += Math.max(0, cpuSecondsOfAll([pid]) - (before.get(pid) ?? 0));
  return total;
}

async function waitForIdle(pids: readonly number[], maxSeconds: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const before = cpuSecondsOfAll(pids);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const used = cpuSecondsOfAll(pids) - before;
    if (used / 0.25 < 0.05 || Date.now() - started > maxSeconds * 1000) return (Date.now() - started) / 1000;
  }
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
      minRatio: min(own.map((m) => m.ratio)),
      maxRatio: max(own.map((m) => m.ratio)),
      medianP50Ms: median(own.map((m) => m.p50Ms)),
      medianP99Ms: median(own.map((m) => m.p99Ms)),
      medianP99Ratio: median(own.map((m) => m.p99Ratio)),
      medianCpuUsPerRequest: median(own.map((m) => m.cpuUsPerRequest)),
      medianCpuRatio: median(own.map((m) => m.cpuRatio)),
      ...(server.database === undefined ? {} : { medianDbCpuUsPerRequest: median(own.map((m) => m.dbCpuUsPerRequest ?? NaN)) }),
      maxPeakRssBytes: max(own.map((m) => m.peakRssBytes)),
      medianServerCpu: median(own.map((m) => m.serverCpu)),
      medianLoadCpu: median(own.map((m) => m.loadCpu)),
      maxOtherCpu: max(own.map((m) => m.otherCpu)),
      medianDrainSeconds: median(own.map((m) => m.drainSeconds)),
      non2xx: own.reduce((n, m) => n + m.non2xx, 0),
      errors: own.reduce((n, m) => n + m.errors, 0),
    };
  });
}
