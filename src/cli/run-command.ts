import type { CoreApp } from "../app/core-app";
import type { LogLevel } from "../util/logger";
import { loadApp } from "../config/load-app";
import { LOG_LEVELS } from "../util/logger";
import { WebhookSource } from "../sources/webhook/webhook-source";
import { UsageError } from "./usage";
import { parseCommandArgs } from "./command-args";

/**
 * `run <worker.yaml>`: builds the app and starts it with `app.run()`, which stops it
 * gracefully on SIGINT/SIGTERM and exits. Resolves once the app listens; the process then
 * lives as long as the app. The app's "started" log line lists the listeners' origins; one
 * "listening" line per webhook gives its full URL (useful with `port: 0`).
 */
export async function runCommand(args: readonly string[]): Promise<CoreApp> {
  const { values, positionals } = parseCommandArgs("run", args, { "log-level": { type: "string" } });
  if (positionals.length !== 1) throw new UsageError("run takes one argument: the worker YAML file");
  const level = values["log-level"];
  if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel)) {
    throw new UsageError(`--log-level must be one of: ${LOG_LEVELS.join(", ")}`);
  }
  const app = await loadApp(positionals[0], level === undefined ? {} : { logLevel: level as LogLevel });
  // Started here so that a failure is reported the CLI's way (run() would exit on its own).
  await app.start();
  await app.run();
  for (const task of app.tasks) {
    if (task.source instanceof WebhookSource) {
      app.logger.info({ task: task.name, methods: task.source.options.methods, url: task.source.url }, "listening");
    }
  }
  return app;
}
