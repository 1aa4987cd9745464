import { resolve } from "node:path";
import type { CoreAppOptions } from "../app/core-app";
import { defined } from "./defined";
import type { LoadedConfig } from "./load-config";

/** The CoreApp options the `app:` block gives (dataDir resolved from the YAML file's directory). */
export function appOptionsOf(config: LoadedConfig): CoreAppOptions {
  const app = config.app;
  return defined({
    store: app.store,
    dataDir: app.dataDir === undefined ? undefined : resolve(config.dir, app.dataDir),
    maxQueued: app.maxQueued,
    maxBytes: app.maxBytes,
    logLevel: app.logLevel,
    trustProxy: app.trustProxy,
    shutdownTimeoutMs: app.shutdownTimeoutMs,
    http: app.http === undefined ? undefined : defined({ ...app.http }),
    metrics: app.metrics === undefined ? undefined : defined({ ...app.metrics }),
    health: app.health === undefined ? undefined : defined({ ...app.health }),
    shutdownDelayMs: app.shutdownDelayMs,
    tracing: app.tracing,
    logRefusals: app.logRefusals,
  });
}
