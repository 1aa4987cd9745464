import { connect } from "node:net";
import { LatencyHistogram } from "./latency-histogram";
import type { LoadJob, LoadResult } from "./load-job";
import { jsonBody } from "./payload";

/**
 * `Connection: close` load: `connections` clients, each opening a new TCP connection for every
 * request, sending it, reading the answer to the end, and starting over. Latency runs from
 * connect to the end of the answer (what a sender without keep-alive waits). Written by hand
 * because autocannon's reconnect path miscounts answers and latencies in this mode.
 */
export async function closeLoad(job: LoadJob): Promise<LoadResult> {
  const body = jsonBody(job.bodyBytes);
  const requests = job.paths.map((path) =>
    Buffer.from(
      `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${job.port}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    ),
  );
  if (job.warmupSeconds) await drive(job, requests, job.warmupSeconds * 1000, undefined, new LatencyHistogram());
  const histogram = new LatencyHistogram();
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const counts = await drive(job, requests, (job.seconds ?? 5) * 1000, job.amount, histogram);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  return {
    ...counts,
    seconds,
    rps: counts.ok / seconds,
    p50Ms: histogram.quantileMs(0.5),
    p99Ms: histogram.quantileMs(0.99),
    meanMs: histogram.meanMs,
    maxMs: histogram.maxMs,
    loadCpuSeconds: (used.user + used.system) / 1e6,
  };
}

interface Counts {
  ok: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
}

function drive(job: LoadJob, requests: Buffer[], durationMs: number, amount: number | undefined, histogram: LatencyHistogram): Promise<Counts> {
  const counts: Counts = { ok: 0, non2xx: 0, errors: 0, statuses: {} };
  const deadline = Date.now() + durationMs;
  let started = 0;
  let next = 0;
  const more = () => (amount !== undefined ? started < amount : Date.now() < deadline);

  return new Promise((resolve) => {
    let active = 0;
    const one = () => {
      if (!more()) {
        if (--active === 0) resolve(counts);
        return;
      }
      started++;
      const request = requests[next++ % requests.length]!;
      const t0 = process.hrtime.bigint();
      let status = "";
      let failed = false;
      const socket = connect({ port: job.port, host: "127.0.0.1", noDelay: true });
      socket.on("connect", () => socket.write(request));
      socket.on("data", (chunk: Buffer) => {
        if (status === "") status = chunk.toString("latin1", 9, 12);
      });
      socket.on("error", () => {
        failed = true;
      });
      socket.on("close", () => {
        if (failed || status === "") counts.errors++;
        else {
          counts.statuses[status] = (counts.statuses[status] ?? 0) + 1;
          if (status[0] === "2") {
            counts.ok++;
            histogram.record(Number(process.hrtime.bigint() - t0) / 1e6);
          } else counts.non2xx++;
        }
        one();
      });
    };
    for (let i = 0; i < job.connections; i++) {
      active++;
      one();
    }
  });
}
