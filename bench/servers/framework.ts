import { CoreApp, createDefaultLogger, EmbeddedStore, silentLogger, WebhookSource } from "webhook-tasks";
import { freePort } from "./free-port";
import { announce, exitOnSignal, readConfig } from "./server-config";

/** Our framework: one WebhookSource (and task) per path, all on one port, in the asked ack mode and store. */
const config = readConfig();

async function main(): Promise<void> {
  const port = config.port === 0 && config.paths.length > 1 ? await freePort() : config.port;
  const app = new CoreApp("bench", {
    store: config.store === "embedded" && config.journal === false ? new EmbeddedStore({ dir: config.dataDir!, journal: false, maxQueued: config.maxQueued }) : config.store ?? "memory",
    dataDir: config.dataDir,
    maxQueued: config.maxQueued,
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
  const sources = config.paths.map((path, i) => {
    const source = new WebhookSource({ path, port, host: "127.0.0.1", ack: config.ack ?? "received" });
    app.task({ source, name: `hook${i}`, concurrency: config.concurrency }, handler);
    return source;
  });
  await app.start();
  exitOnSignal(() => app.stop());
  announce(sources[0]!.port);
}

main().catch((error: unknown) => {
  process.stderr.write(`framework server failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
