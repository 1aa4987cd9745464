import cluster from "node:cluster";
import { CoreApp, createDefaultLogger, EmbeddedStore, silentLogger, WebhookSource, type CoreAppOptions, type WebhookEvent } from "webhook-tasks";
import { freePort } from "./free-port";
import { postgresStore } from "./postgres-store";
import { announce, exitOnSignal, readConfig, type HistoryLine } from "./server-config";

/**
 * Our framework: one WebhookSource (and task) per path, all on one port, in the asked ack mode
 * and store. With `processes` > 1, that many app processes share the port (node:cluster hands
 * each connection to one of them) and the store.
 */
const config = readConfig();
interface Emitted {
  path: string;
  at: number;
}
const processes = config.processes ?? 1;

function store(): CoreAppOptions["store"] {
  if (config.store === "postgres") return postgresStore(config.postgresUrl!, config.postgresSchema!, config.preparedStatements);
  if (config.store === "embedded" && config.journal === false) return new EmbeddedStore({ dir: config.dataDir!, journal: false, maxQueued: config.maxQueued });
  if (config.store === "embedded" && config.historyWrites !== undefined) return new EmbeddedStore({ dir: config.dataDir!, maxQueued: config.maxQueued, historyWrites: config.historyWrites });
  return config.store ?? "memory";
}

async function serve(port: number): Promise<{ port: number; stop: () => Promise<void> }> {
  const app = new CoreApp("bench", {
    store: store(),
    dataDir: config.dataDir,
    maxQueued: config.maxQueued,
    // Apps keep their history by default; the -no-history servers turn it off (one option).
    ...(config.history === false ? { history: false } : {}),
    // Observed: metrics, refusal logs (pino, JSON lines to a sink) and spans through the
    // OpenTelemetry API with no SDK; otherwise all three off.
    ...(config.observe
      ? { metrics: true, tracing: true, logRefusals: true, logger: createDefaultLogger("info", { app: "bench" }, { write: () => undefined }) }
      : { tracing: false, logRefusals: false, logger: silentLogger }),
  });
  const delayMs = config.taskDelayMs ?? 0;
  const handler = delayMs > 0
    ? () => new Promise<void>((resolve) => setTimeout(resolve, delayMs))
    : async () => {};
  // With `emit`, each webhook task hands a small value on to a second, no-op task.
  const emitting = async (ctx: unknown, event: WebhookEvent): Promise<Emitted> => {
    await handler();
    return { path: event.path, at: event.received_at };
  };
  // Keyed concurrency: each event gets one of `keys` keys, in turn (computed once, as it is queued).
  let next = 0;
  const keys = config.keys ?? 1_000;
  const hookConcurrency =
    config.keyedLimit === undefined ? config.concurrency : { limit: config.keyedLimit, key: () => String(next++ % keys), perProcess: config.concurrency ?? 16 };
  const sources = config.paths.map((path, i) => {
    const source = new WebhookSource({ path, port, host: "127.0.0.1", ack: config.ack ?? "received" });
    if (config.emit) {
      app.task({ source, name: `hook${i}`, concurrency: hookConcurrency, emit: `next${i}` }, emitting);
      app.task({ source: `next${i}`, name: `next${i}`, concurrency: config.concurrency }, async () => {});
    } else if ((config.subscribers ?? 1) > 1) {
      for (let k = 0; k < config.subscribers!; k++) {
        app.task({ source, name: `hook${i}.s${k}`, concurrency: config.concurrency, filter: (e: WebhookEvent) => e.method === "POST" }, handler);
      }
    } else {
      app.task({ source, name: `hook${i}`, concurrency: hookConcurrency }, handler);
    }
    return source;
  });
  await app.start();
  // The harness asks, after a case: the history's events and bytes then (it divides).
  if (config.history !== false) process.on("SIGUSR2", () => void reportHistory(app));
  return { port: sources[0]!.port, stop: () => app.stop() };
}

/** Once the history's notes are written: how many events it holds and their bytes. */
async function reportHistory(app: CoreApp): Promise<void> {
  const history = app.store.history;
  try {
    if (history === undefined) throw new Error(`the ${app.store.engine} store keeps no history`);
    await history.flush();
    const size: HistoryLine = await history.size();
    // A pipe: written before the process goes on (synchronous on Linux).
    process.stdout.write(`HISTORY ${JSON.stringify({ events: size.events, bytes: size.bytes })}\n`);
  } catch (error) {
    process.stderr.write(`history size failed: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

async function main(): Promise<void> {
  if (processes > 1 && cluster.isPrimary) return primary();
  const port = config.port === 0 && (config.paths.length > 1 || processes > 1) ? await freePort() : config.port;
  if (cluster.isWorker) {
    const server = await serve(Number(process.env.BENCH_CLUSTER_PORT));
    exitOnSignal(server.stop);
    process.send!({ ready: process.pid });
    return;
  }
  const server = await serve(port);
  exitOnSignal(server.stop);
  announce(server.port);
}

/** Forks the app processes on one port, announces once all listen, stops them on a signal. */
async function primary(): Promise<void> {
  const port = config.port === 0 ? await freePort() : config.port;
  let stopping = false;
  const pids = await Promise.all(
    Array.from({ length: processes }, () => {
      const worker = cluster.fork({ BENCH_CLUSTER_PORT: String(port) });
      worker.on("exit", (code, signal) => {
        if (!stopping) {
          process.stderr.write(`app process ${worker.process.pid} exited (code ${code}, signal ${signal})\n`);
          process.exit(1);
        }
      });
      return new Promise<number>((resolve) => worker.on("message", (m: { ready?: number }) => m.ready !== undefined && resolve(m.ready)));
    }),
  );
  exitOnSignal(async () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {});
    await Promise.all(workers.map((w) => new Promise<void>((resolve) => (w!.isDead() ? resolve() : (w!.once("exit", () => resolve()), w!.kill("SIGTERM"))))));
  });
  announce(port, [process.pid, ...pids]);
}

main().catch((error: unknown) => {
  process.stderr.write(`framework server failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
