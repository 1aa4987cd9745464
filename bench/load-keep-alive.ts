import autocannon from "autocannon";
import { LatencyHistogram } from "./latency-histogram";
import type { LoadJob, LoadResult } from "./load-job";
import { jsonBody } from "./payload";

/**
 * Keep-alive load with autocannon's programmatic API: `connections` persistent connections,
 * each sending the next request as soon as the previous answer arrived. Latency is recorded
 * from autocannon's per-response event into a 10 µs histogram (its own is whole milliseconds).
 */
export async function keepAliveLoad(job: LoadJob): Promise<LoadResult> {
  const body = jsonBody(job.bodyBytes);
  const base = {
    url: `http://127.0.0.1:${job.port}`,
    connections: job.connections,
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    requests: job.paths.map((path) => ({ path })),
    timeout: 30,
    // autocannon notices the end of a run (duration over, amount reached) on this tick; its
    // default of 1 s would stretch short runs by up to a second.
    sampleInt: 100,
  };
  if (job.warmupSeconds) await run({ ...base, duration: job.warmupSeconds }, undefined);
  const histogram = new LatencyHistogram();
  const cpu = process.cpuUsage();
  const options = job.amount !== undefined ? { ...base, amount: job.amount } : { ...base, duration: job.seconds ?? 5 };
  const started = process.hrtime.bigint();
  const result = await run(options, histogram);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (stat as { count: number }).count;
  const ok = result["2xx"] as number;
  return {
    ok,
    non2xx: result.non2xx as number,
    errors: (result.errors as number) + (result.timeouts as number),
    seconds,
    rps: ok / seconds,
    p50Ms: histogram.quantileMs(0.5),
    p99Ms: histogram.quantileMs(0.99),
    meanMs: histogram.meanMs,
    maxMs: histogram.maxMs,
    statuses,
    loadCpuSeconds: (used.user + used.system) / 1e6,
  };
}

function run(options: Record<string, unknown>, histogram: LatencyHistogram | undefined): Promise<any> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error: Error | null, result: unknown) => (error ? reject(error) : resolve(result)));
    if (histogram !== undefined) {
      instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
        if (status >= 200 && status < 300) histogram.record(ms);
      });
    }
  });
}
