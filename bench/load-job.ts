/** What the harness asks the load generator to do, and what it reports back. */
export interface LoadJob {
  port: number;
  /** Paths requested in turn (ten sources: ten paths). */
  paths: string[];
  /** Size of the JSON body posted (see payload.ts). */
  bodyBytes: number;
  connections: number;
  /** false: every request on a new connection with `Connection: close`. */
  keepAlive: boolean;
  /** Run for this long... */
  seconds?: number;
  /** ...or until this many responses came back (backlog fills). */
  amount?: number;
  /** Unmeasured load before the measured part, to warm the JIT and open connections. */
  warmupSeconds?: number;
}

export interface LoadResult {
  /** Responses with a 2xx status. */
  ok: number;
  /** Responses with any other status. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Measured wall time, seconds. */
  seconds: number;
  /** 2xx responses per second. */
  rps: number;
  /** Latency of 2xx responses, milliseconds. */
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  /** Status code -> count, for anything unexpected. */
  statuses: Record<string, number>;
  /** CPU seconds the load generator used while measuring, to see whether it was the limit. */
  loadCpuSeconds: number;
}
