import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CASES, MAIN_CASE, pathsFor } from "./cases";
import { perRoundRatio } from "./goals";
import { buildAt, resolveRev, runnerFor } from "./guard-build";
import { decide, type GuardPair } from "./guard-decision";
import { LoadGenerator } from "./load";
import { runRounds } from "./rounds";
import { FRAMEWORK_PERSISTED, FRAMEWORK_POSTGRES, FRAMEWORK_RECEIVED, FRAMEWORK_RECEIVED_OBSERVED, type ServerKind } from "./servers/catalog";
import { launch, type RunningServer } from "./servers/launch";
import { readSettings, REPO_ROOT } from "./settings";

/**
 * `npm run bench:guard`: this working tree's build against an earlier commit's, side by side in
 * interleaved rounds of the main case (the emit shape), for each mode in BENCH_GUARD_MODES
 * (default received,persisted). Exits 1 with a "GUARD FAILED" line when a mode's median
 * per-round ratio, current ÷ earlier, is below 1 - BENCH_GUARD_THRESHOLD (default 0.05);
 * exits 2 when the builds could not be compared at all.
 */
const log = (line: string) => process.stdout.write(`${line}\n`);

const MODES: Record<string, ServerKind> = {
  received: FRAMEWORK_RECEIVED,
  persisted: FRAMEWORK_PERSISTED,
  observed: FRAMEWORK_RECEIVED_OBSERVED,
  postgres: FRAMEWORK_POSTGRES,
};

function threshold(): number {
  const text = process.env.BENCH_GUARD_THRESHOLD ?? "0.05";
  const value = Number(text);
  if (!(value >= 0 && value < 1)) throw new Error(`BENCH_GUARD_THRESHOLD must be a fraction in [0, 1), e.g. 0.05 for 5%; got "${text}"`);
  return value;
}

async function main(): Promise<number> {
  const settings = readSettings();
  const limit = threshold();
  const modes = (process.env.BENCH_GUARD_MODES ?? "received,persisted").split(",").map((s) => s.trim()).filter(Boolean);
  for (const mode of modes) if (MODES[mode] === undefined) throw new Error(`unknown mode "${mode}" in BENCH_GUARD_MODES; one of ${Object.keys(MODES).join(", ")}`);
  const rev = resolveRev(process.env.BENCH_AGAINST);
  const against = rev.hash.slice(0, 7);
  log(`guard: this working tree (${REPO_ROOT}) against ${rev.label}; modes ${modes.join(", ")}; threshold ${(limit * 100).toFixed(1)}%`);
  const earlierRoot = buildAt(rev.hash, process.env.BENCH_GUARD_CACHE ?? join(settings.dataDir, "builds"), log);

  const runDir = join(settings.dataDir, `guard-${process.pid}-${Date.now()}`);
  mkdirSync(runDir, { recursive: true });
  const scripts = { current: runnerFor("current", REPO_ROOT, runDir), earlier: runnerFor("earlier", earlierRoot, runDir) };
  const benchCase = CASES.find((c) => c.id === MAIN_CASE)!;
  const pairs: GuardPair[] = [];
  const kinds: ServerKind[] = [];
  for (const mode of modes) {
    const base = MODES[mode]!;
    const pair = { mode, current: `current-${mode}`, earlier: `earlier-${mode}` };
    pairs.push(pair);
    kinds.push({ ...base, id: pair.current, label: `${base.label}, this tree`, script: join(scripts.current, "framework.js"), baseline: false });
    kinds.push({ ...base, id: pair.earlier, label: `${base.label}, ${against}`, script: join(scripts.earlier, "framework.js"), baseline: false });
  }

  const load = new LoadGenerator();
  const servers: RunningServer[] = [];
  try {
    for (const kind of kinds) {
      const config = { paths: pathsFor(benchCase.sources), port: 0, dataDir: join(runDir, `data-${kind.id}`), emit: benchCase.emit };
      try {
        servers.push(await launch(kind, config));
      } catch (error) {
        log(`GUARD FAILED: ${kind.id} did not start: ${(error instanceof Error ? error.message : String(error)).split("\n").slice(0, 4).join(" | ")}`);
        return 2;
      }
    }
    log(`case ${benchCase.id}: ${benchCase.title}; ${settings.rounds} rounds x ${settings.seconds} s`);
    const result = await runRounds(benchCase, servers, load, settings, log);
    const verdict = decide(result.measurements, pairs, limit, against);
    writeFileSync(join(settings.dataDir, "guard-last.json"), `${JSON.stringify({ against: rev, threshold: limit, verdict, measurements: result.measurements }, null, 2)}\n`);
    for (const line of verdict.lines.slice(1)) log(line);
    // CPU per request moves less than req/s on a shared machine: shown beside the verdict, not deciding it.
    for (const pair of pairs) {
      const cpu = perRoundRatio(result, pair.current, pair.earlier, "cpuUsPerRequest");
      log(`  ${pair.mode}: CPU µs per request, current ÷ ${against} = ${cpu.toFixed(3)} (lower is better; for reference)`);
    }
    log(verdict.lines[0]!);
    return verdict.failed ? (verdict.pairs.some((p) => p.regressed) ? 1 : 2) : 0;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    load.close();
    rmSync(runDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // The message says what to fix; a build or git failure has its command's output above it.
    process.stderr.write(`GUARD FAILED: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  },
);
