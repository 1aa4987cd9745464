import { rmSync } from "node:fs";
import { join } from "node:path";
import { CONNECTIONS, pathsFor } from "./cases";
import type { LoadGenerator } from "./load";
import { SMALL_BODY_BYTES } from "./payload";
import type { IntakeResult, IntakeRound } from "./results";
import { FRAMEWORK_PERSISTED, FRAMEWORK_RECEIVED, type ServerKind } from "./servers/catalog";
import { launch } from "./servers/launch";
import type { BenchSettings } from "./settings";
import { median } from "./stats";

/**
 * Intake must not depend on how fast tasks run: the same server (emit shape) is measured with a
 * no-op task and with a task that sleeps BENCH_INTAKE_TASK_MS (1,500) per event, with maxQueued
 * high enough that the backlog never answers 503. Each measurement starts a fresh server, so
 * the slow task's backlog from one round does not weigh on the next; rounds alternate which
 * task goes first.
 */
const MAX_QUEUED = 2_000_000;

const VARIANTS: readonly ServerKind[] = [FRAMEWORK_RECEIVED, FRAMEWORK_PERSISTED];

export async function measureIntake(load: LoadGenerator, settings: BenchSettings, runDir: string, log: (line: string) => void): Promise<IntakeResult[]> {
  const results: IntakeResult[] = [];
  for (const kind of VARIANTS) {
    log(`intake: ${kind.label}, no-op task against a ${settings.intakeTaskMs} ms task`);
    const rounds: IntakeRound[] = [];
    try {
      for (let round = 1; round <= settings.rounds; round++) {
        const order = round % 2 === 1 ? [0, settings.intakeTaskMs] : [settings.intakeTaskMs, 0];
        const byDelay = new Map<number, Awaited<ReturnType<typeof once>>>();
        for (const delay of order) byDelay.set(delay, await once(kind, delay, load, settings, join(runDir, `intake-${kind.id}-${round}-${delay}`)));
        const noop = byDelay.get(0)!;
        const slow = byDelay.get(settings.intakeTaskMs)!;
        const r: IntakeRound = { round, noopRps: noop.rps, slowRps: slow.rps, noopP99Ms: noop.p99Ms, slowP99Ms: slow.p99Ms, slowNon2xx: slow.non2xx + slow.errors, ratio: slow.rps / noop.rps };
        rounds.push(r);
        log(`  round ${round}/${settings.rounds}: no-op ${noop.rps.toFixed(0)} req/s (p99 ${noop.p99Ms.toFixed(2)} ms), slow ${slow.rps.toFixed(0)} req/s (p99 ${slow.p99Ms.toFixed(2)} ms): ${r.ratio.toFixed(2)}` +
          (r.slowNon2xx > 0 ? `, ${r.slowNon2xx} non-2xx/errors with the slow task` : ""));
      }
      results.push(summarize(kind, settings.intakeTaskMs, rounds));
    } catch (error) {
      const reason = (error instanceof Error ? error.message : String(error)).split("\n").slice(0, 3).join(" | ");
      log(`  skipped: ${reason}`);
      results.push({ ...summarize(kind, settings.intakeTaskMs, rounds), skipped: reason });
    }
  }
  return results;
}

async function once(kind: ServerKind, taskDelayMs: number, load: LoadGenerator, settings: BenchSettings, dataDir: string) {
  const server = await launch(kind, { paths: pathsFor(1), port: 0, dataDir, emit: true, taskDelayMs, maxQueued: MAX_QUEUED });
  try {
    const job = { port: server.port, paths: server.paths, bodyBytes: SMALL_BODY_BYTES, connections: CONNECTIONS, keepAlive: true };
    if (settings.warmupSeconds > 0) await load.run({ ...job, seconds: settings.warmupSeconds });
    return await load.run({ ...job, seconds: settings.seconds });
  } finally {
    // A slow task leaves most events queued: the server is stopped, not drained.
    await server.stop(5000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function summarize(kind: ServerKind, taskDelayMs: number, rounds: IntakeRound[]): IntakeResult {
  return {
    id: kind.id,
    label: kind.label,
    taskDelayMs,
    maxQueued: MAX_QUEUED,
    rounds,
    medianNoopRps: median(rounds.map((r) => r.noopRps)),
    medianSlowRps: median(rounds.map((r) => r.slowRps)),
    slowVsNoop: median(rounds.map((r) => r.ratio)),
    p99SlowVsNoop: median(rounds.map((r) => r.slowP99Ms / r.noopP99Ms)),
  };
}
