import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CONNECTIONS, pathsFor } from "./cases";
import { diskUsage } from "./disk-usage";
import { LoadGenerator } from "./load";
import { describeMachine } from "./machine";
import { SMALL_BODY_BYTES } from "./payload";
import { memoryOf } from "./proc-stats";
import { renderMarkdown } from "./report-markdown";
import { BACKLOG_JSON, readJson, RESULTS_JSON, writeJson, type BacklogResult, type BacklogResults, type BenchResults } from "./results";
import { BARE_NODE, FRAMEWORK_PERSISTED, FRAMEWORK_RECEIVED, type ServerKind } from "./servers/catalog";
import { launch } from "./servers/launch";
import { readSettings } from "./settings";

/**
 * `npm run bench:backlog`: a task far slower than arrivals (it sleeps on every event, one at a
 * time), so accepted events pile up; the server's RSS is read after every step of the fill.
 * In memory up to BACKLOG_MEMORY_EVENTS (100,000); with the durable store up to
 * BACKLOG_DISK_EVENTS (1,000,000) waiting on disk, where RSS must stay flat.
 */
const log = (line: string) => process.stdout.write(`${line}\n`);

interface BacklogPlan {
  id: string;
  title: string;
  kind: ServerKind;
  events: number;
  step: number;
}

function num(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return Math.floor(value);
}

async function main(): Promise<void> {
  const settings = readSettings();
  const memoryEvents = num("BACKLOG_MEMORY_EVENTS", 100_000);
  const diskEvents = num("BACKLOG_DISK_EVENTS", 1_000_000);
  const taskDelayMs = num("BACKLOG_TASK_MS", 1000);
  const only = process.env.BACKLOG_CASES?.split(",").map((s) => s.trim()).filter(Boolean);
  const plans: BacklogPlan[] = [
    { id: "memory-bare", title: `bare node:http, ${memoryEvents.toLocaleString("en-US")} events queued in an array (reference)`, kind: BARE_NODE, events: memoryEvents, step: Math.ceil(memoryEvents / 4) },
    { id: "memory", title: `ack=received, memory store: ${memoryEvents.toLocaleString("en-US")} events queued in memory`, kind: FRAMEWORK_RECEIVED, events: memoryEvents, step: Math.ceil(memoryEvents / 4) },
    { id: "disk", title: `ack=persisted, embedded store: ${diskEvents.toLocaleString("en-US")} events waiting on disk`, kind: FRAMEWORK_PERSISTED, events: diskEvents, step: Math.ceil(diskEvents / 10) },
  ].filter((p) => only === undefined || only.includes(p.id));

  const runDir = join(settings.dataDir, `backlog-${process.pid}-${Date.now()}`);
  mkdirSync(runDir, { recursive: true });
  const out: BacklogResults = { startedAt: new Date().toISOString(), finishedAt: "", machine: describeMachine(runDir), results: [] };
  const load = new LoadGenerator();
  try {
    for (const plan of plans) {
      log(`backlog ${plan.id}: ${plan.title}`);
      const dataDir = join(runDir, plan.id);
      try {
        out.results.push(await fill(plan, load, dataDir, taskDelayMs));
      } catch (error) {
        const reason = (error instanceof Error ? error.message : String(error)).split("\n").slice(0, 3).join(" | ");
        log(`  skipped: ${reason}`);
        out.results.push({ id: plan.id, title: plan.title, server: plan.kind.label, taskDelayMs, target: plan.events, baselineRssBytes: NaN, baselineRssAnonBytes: NaN, steps: [], non2xx: 0, errors: 0, statuses: {}, seconds: 0, skipped: reason });
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    load.close();
    rmSync(runDir, { recursive: true, force: true });
  }
  out.finishedAt = new Date().toISOString();
  writeJson(settings.resultsDir, BACKLOG_JSON, out);
  const bench = readJson<BenchResults>(settings.resultsDir, RESULTS_JSON);
  writeFileSync(join(settings.resultsDir, "RESULTS.md"), renderMarkdown(bench, out));
  log(`wrote ${join(settings.resultsDir, BACKLOG_JSON)} and RESULTS.md`);
}

async function fill(plan: BacklogPlan, load: LoadGenerator, dataDir: string, taskDelayMs: number): Promise<BacklogResult> {
  const server = await launch(plan.kind, {
    paths: pathsFor(1),
    port: 0,
    dataDir,
    taskDelayMs,
    concurrency: 1,
    // room for the whole fill plus what is in flight, so the figure is the backlog's, not a 503's
    maxQueued: plan.events + 10 * CONNECTIONS,
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const baseline = memoryOf(server.pid);
    const result: BacklogResult = {
      id: plan.id, title: plan.title, server: plan.kind.label, taskDelayMs, target: plan.events,
      baselineRssBytes: baseline.rss, baselineRssAnonBytes: baseline.rssAnon, steps: [], non2xx: 0, errors: 0, statuses: {}, seconds: 0,
    };
    const started = Date.now();
    let accepted = 0;
    for (let sent = 0; sent < plan.events; ) {
      const amount = Math.min(plan.step, plan.events - sent);
      const r = await load.run({ port: server.port, paths: server.paths, bodyBytes: SMALL_BODY_BYTES, connections: Math.min(CONNECTIONS, amount), keepAlive: true, amount });
      sent += amount;
      accepted += r.ok;
      result.non2xx += r.non2xx;
      result.errors += r.errors;
      for (const [code, n] of Object.entries(r.statuses)) result.statuses[code] = (result.statuses[code] ?? 0) + n;
      const memory = memoryOf(server.pid);
      const step = { accepted, rssBytes: memory.rss, peakRssBytes: memory.peakRss, rssAnonBytes: memory.rssAnon, rssFileBytes: memory.rssFile, diskBytes: plan.kind.config.store === "embedded" ? diskUsage(dataDir) : undefined, rps: r.rps };
      result.steps.push(step);
      log(`  ${accepted.toLocaleString("en-US")} accepted: RSS ${(step.rssBytes / 2 ** 20).toFixed(1)} MiB (anon ${(step.rssAnonBytes / 2 ** 20).toFixed(1)}, file ${(step.rssFileBytes / 2 ** 20).toFixed(1)}, peak ${(step.peakRssBytes / 2 ** 20).toFixed(1)})` +
        (step.diskBytes !== undefined ? `, store ${(step.diskBytes / 2 ** 20).toFixed(0)} MiB on disk` : "") + `, ${r.rps.toFixed(0)} req/s` +
        (r.non2xx || r.errors ? `, non-2xx ${r.non2xx}, errors ${r.errors}` : ""));
    }
    result.seconds = (Date.now() - started) / 1000;
    return result;
  } finally {
    await server.stop(5000);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:backlog failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
