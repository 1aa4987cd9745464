/**
 * What the harness tells a server child (one JSON argument) and how the child answers
 * (one `READY {...}` line on stdout). Shared by the three server kinds.
 */
export interface ServerConfig {
  /** Exact paths served, one per source (one source: ["/hooks/0"]). */
  paths: string[];
  /** Port to listen on; 0 lets the OS pick. */
  port: number;
  /** Framework only: what the 2xx promises. */
  ack?: "received" | "persisted";
  /** Framework only: the store engine. */
  store?: "memory" | "embedded" | "postgres";
  /** Framework only, PostgreSQL store: its connection string and schema (set by the harness). */
  postgresUrl?: string;
  postgresSchema?: string;
  /** Framework only, PostgreSQL store: false sends every statement unnamed (parsed and planned per call). */
  preparedStatements?: boolean;
  /** Framework only: app processes sharing the port (node:cluster) and the store; default 1. */
  processes?: number;
  /** Framework only, embedded store: false turns its journal off (every message goes to the B-tree). */
  journal?: boolean;
  /** Embedded store: the history's batches (EmbeddedStore `historyWrites`), to compare batch sizes side by side. */
  historyWrites?: { intervalMs: number; batchNotes: number };
  /** Framework only: the store's directory (embedded store). */
  dataDir?: string;
  /** Most events one queue may hold before 503 (backlog cases raise it). */
  maxQueued?: number;
  /** Milliseconds each task run takes: 0 is a no-op task; more makes the task slower than arrivals. */
  taskDelayMs?: number;
  /**
   * The framework's basic shape: the webhook task returns a small value that goes to a queue
   * consumed by a second (no-op) task. The bare servers do the same with a second queue.
   */
  emit?: boolean;
  /** Framework only: tasks on each source (fan-out), each with a cheap filter that passes; default 1, no filter. */
  subscribers?: number;
  /** Task runs at once (backlog cases use 1). */
  concurrency?: number;
  /**
   * Framework only: the webhook task gets `concurrency: { limit: keyedLimit, key }`, its events
   * spread over `keys` keys (default 1,000); `concurrency` stays its runs at once per process.
   */
  keyedLimit?: number;
  keys?: number;
  /**
   * Framework only: metrics on, refusal logs through the default pino logger, tracing API on
   * (no SDK). Without it, all three are off.
   */
  observe?: boolean;
  /**
   * Framework only: the event history (apps keep it by default); false turns it off. A server
   * with it on answers SIGUSR2 with one `HISTORY {...}` line (HistoryLine) on stdout.
   */
  history?: boolean;
}

/** What a framework server with the event history tells on SIGUSR2 (one `HISTORY {...}` line on stdout). */
export interface HistoryLine {
  /** Events the history kept, and the bytes they take (store.history.size()). */
  events: number;
  bytes: number;
}

export interface ReadyLine {
  port: number;
  pid: number;
  /** Every process of the server, when it is more than one (pid among them). */
  pids?: number[];
}

export function readConfig(): ServerConfig {
  const text = process.argv[2];
  if (text === undefined) throw new Error("usage: node <server>.js '<ServerConfig JSON>'");
  return JSON.parse(text) as ServerConfig;
}

export function announce(port: number, pids?: number[]): void {
  const line: ReadyLine = pids === undefined ? { port, pid: process.pid } : { port, pid: process.pid, pids };
  process.stdout.write(`READY ${JSON.stringify(line)}\n`);
}

/** Ends the process on SIGTERM/SIGINT after `close` resolves (or after 10 s, whichever is first). */
export function exitOnSignal(close: () => Promise<void>): void {
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(0), 10_000).unref();
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`close failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
