import { resolve } from "node:path";
import type { CoreAppOptions } from "../app/core-app";
import { DATA_DIR_ENV } from "../store/create-store";
import { defined } from "./defined";
import type { LoadedConfig } from "./load-config";
import type { ConsoleAuth, ConsoleOptions } from "../console/console-options";
import type { ConsoleConfig } from "./schema/console-config";

/**
 * The CoreApp options the `app:` block gives. `dataDir` is resolved from the YAML file's
 * directory, as handler references are; unset, it is `.data/<app name>` beside the file
 * (unless $WEBHOOK_TASKS_DATA_DIR names one), whatever the working directory.
 */
export function appOptionsOf(config: LoadedConfig, env: NodeJS.ProcessEnv = process.env): CoreAppOptions {
  const app = config.app;
  const fromEnv = env[DATA_DIR_ENV] !== undefined && env[DATA_DIR_ENV] !== "";
  return defined({
    store: app.store,
    dataDir: app.dataDir !== undefined ? resolve(config.dir, app.dataDir) : fromEnv ? undefined : resolve(config.dir, ".data", config.name),
    maxQueued: app.maxQueued,
    maxBytes: app.maxBytes,
    logLevel: app.logLevel,
    trustProxy: app.trustProxy,
    shutdownTimeoutMs: app.shutdownTimeoutMs,
    http: app.http === undefined ? undefined : defined({ ...app.http }),
    metrics: app.metrics === undefined ? undefined : defined({ ...app.metrics }),
    health: app.health === undefined ? undefined : defined({ ...app.health }),
    console: app.console === undefined ? undefined : consoleOptionsOf(app.console),
    shutdownDelayMs: app.shutdownDelayMs,
    tracing: app.tracing,
    logRefusals: app.logRefusals,
    history: app.history === undefined || app.history === false ? app.history : defined({ ...app.history }),
  });
}

/** `app.console` as CoreApp's `console` option; the auth block was checked whole by validation. */
function consoleOptionsOf(config: ConsoleConfig): ConsoleOptions {
  const auth = config.auth;
  const consoleAuth: ConsoleAuth | undefined =
    auth === undefined ? undefined : auth.token !== undefined ? { token: auth.token } : { username: auth.username ?? "", password: auth.password ?? "" };
  return defined({ host: config.host, port: config.port, path: config.path, auth: consoleAuth });
}
