import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CASES, pathsFor } from "./cases";
import { summarizeProfile, type ProfileSummary } from "./cpu-profile-summary";
import { LoadGenerator } from "./load";
import { ALL_SERVERS } from "./servers/catalog";
import { launch } from "./servers/launch";
import { readSettings } from "./settings";

/**
 * `npm run bench:profile`: each asked server under full load of one case with `node --cpu-prof`,
 * then where its CPU time went (bench/results/profiles/<server>-<case>.md and the .cpuprofile,
 * which Chrome DevTools opens). PROFILE_SERVERS (default framework-received,framework-persisted,bare-node),
 * PROFILE_CASE (default one-source), PROFILE_SECONDS (default 10).
 */
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const settings = readSettings();
  const ids = (process.env.PROFILE_SERVERS ?? "framework-received,framework-persisted,bare-node").split(",").map((s) => s.trim());
  const benchCase = CASES.find((c) => c.id === (process.env.PROFILE_CASE ?? "one-source"));
  if (!benchCase) throw new Error(`unknown PROFILE_CASE; one of ${CASES.map((c) => c.id).join(", ")}`);
  const seconds = Number(process.env.PROFILE_SECONDS ?? 10);
  const outDir = join(settings.resultsDir, "profiles");
  mkdirSync(outDir, { recursive: true });
  const load = new LoadGenerator();
  try {
    for (const kind of ALL_SERVERS.filter((k) => ids.includes(k.id))) {
      const profDir = join(outDir, `${kind.id}-${benchCase.id}`);
      rmSync(profDir, { recursive: true, force: true });
      const dataDir = join(settings.dataDir, `profile-${process.pid}-${kind.id}`);
      const server = await launch(kind, { paths: pathsFor(benchCase.sources), port: 0, dataDir, emit: benchCase.emit }, { nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${profDir}`] });
      let rps = NaN;
      try {
        const r = await load.run({ port: server.port, paths: server.paths, bodyBytes: benchCase.bodyBytes, connections: benchCase.connections, keepAlive: benchCase.keepAlive, seconds, warmupSeconds: 1 });
        rps = r.rps;
      } finally {
        await server.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
      const file = readdirSync(profDir).find((f) => f.endsWith(".cpuprofile"));
      if (!file) {
        log(`${kind.id}: no profile written`);
        continue;
      }
      const summary = summarizeProfile(join(profDir, file));
      const report = render(kind.label, benchCase.title, rps, seconds, join(profDir, file), summary);
      writeFileSync(join(outDir, `${kind.id}-${benchCase.id}.md`), report);
      log(report);
    }
  } finally {
    load.close();
  }
}

function render(label: string, title: string, rps: number, seconds: number, file: string, s: ProfileSummary): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const out = [`## ${label} — ${title}`, "", `${rps.toFixed(0)} req/s under profiling (${seconds} s; the profiler itself costs some); idle ${pct(s.idleShare)} of samples; ${(s.startupMs / 1000).toFixed(2)} s of start-up (module loading) left out. Profile: ${file}`, ""];
  out.push("Self time by area (share of busy time):", "", "| area | share |", "|---|---:|");
  for (const a of s.areas.slice(0, 12)) out.push(`| ${a.area} | ${pct(a.share)} |`);
  out.push("", "Top functions by self time:", "", "| function | where | self | inclusive |", "|---|---|---:|---:|");
  for (const f of s.topSelf) out.push(`| ${f.name} | ${f.where} | ${pct(f.selfShare)} | ${pct(f.totalShare)} |`);
  if (s.topOwnTotal.length > 0) {
    out.push("", "webhook-tasks functions by inclusive time:", "", "| function | where | inclusive | self |", "|---|---|---:|---:|");
    for (const f of s.topOwnTotal) out.push(`| ${f.name} | ${f.where} | ${pct(f.totalShare)} | ${pct(f.selfShare)} |`);
  }
  out.push("");
  return out.join("\n");
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:profile failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
