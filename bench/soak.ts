import { CONNECTIONS, pathsFor } from "./cases";
import type { LoadGenerator } from "./load";
import { SMALL_BODY_BYTES } from "./payload";
import { diskUsage } from "./disk-usage";
import { memoryOf } from "./proc-stats";
import type { SoakResult, SoakSample } from "./results";
import type { ServerKind } from "./servers/catalog";
import { launch } from "./servers/launch";
import type { BenchSettings } from "./settings";
import { median } from "./stats";

const MiB = 2 ** 20;

/**
 * Full load for a long stretch (BENCH_SOAK_SECONDS) on one server, its RSS sampled every
 * second: memory that grows with the number of requests served (a leak, an unbounded queue)
 * shows as a rising line; a bounded server levels off after warm-up. RSS is split into
 * anonymous memory (heap, buffers) and file-mapped pages (the embedded store maps its data
 * file, so those grow with the file).
 */
export async function soak(kind: ServerKind, load: LoadGenerator, settings: BenchSettings, dataDir: string): Promise<SoakResult> {
  const seconds = settings.soakSeconds;
  const server = await launch(kind, { paths: pathsFor(1), port: 0, dataDir, emit: true });
  const samples: SoakSample[] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    try {
      const m = memoryOf(server.pid);
      samples.push({ second: Math.round((Date.now() - started) / 100) / 10, rssBytes: m.rss, rssAnonBytes: m.rssAnon, rssFileBytes: m.rssFile });
    } catch {
      // the process is gone; the load result will say why
    }
  }, 1000);
  try {
    const result = await load.run({
      port: server.port,
      paths: server.paths,
      bodyBytes: SMALL_BODY_BYTES,
      connections: CONNECTIONS,
      keepAlive: true,
      seconds,
    });
    clearInterval(sampler);
    const window = (from: number, to: number, field: "rssBytes" | "rssAnonBytes") =>
      median(samples.filter((s) => s.second >= from * seconds && s.second <= to * seconds).map((s) => s[field]));
    const early = window(1 / 6, 2 / 6, "rssBytes");
    const late = window(5 / 6, 1, "rssBytes");
    const growth = late - early;
    const anonEarly = window(1 / 6, 2 / 6, "rssAnonBytes");
    const anonLate = window(5 / 6, 1, "rssAnonBytes");
    const diskBytes = kind.config.store === "embedded" ? diskUsage(dataDir) : undefined;
    return {
      server: kind.id,
      label: kind.label,
      seconds,
      rps: result.rps,
      p99Ms: result.p99Ms,
      ok: result.ok,
      non2xx: result.non2xx,
      errors: result.errors,
      samples,
      rssEarlyBytes: early,
      rssLateBytes: late,
      growthBytes: growth,
      rssAnonEarlyBytes: anonEarly,
      rssAnonLateBytes: anonLate,
      anonGrowthBytes: anonLate - anonEarly,
      diskBytes,
      flat: growth < 0.1 * early && growth < 16 * MiB,
      anonFlat: anonLate - anonEarly < 0.1 * anonEarly && anonLate - anonEarly < 16 * MiB,
    };
  } finally {
    clearInterval(sampler);
    await server.stop();
  }
}
