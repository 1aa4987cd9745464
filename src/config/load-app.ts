import type { CoreApp, CoreAppOptions } from "../app/core-app";
import { assemble, resolveHandlers } from "./build-app";
import { ConfigError } from "./config-error";
import { inspectConfig, type LoadConfigOptions } from "./load-config";

/**
 * Reads a worker YAML file and builds its CoreApp (not started). Every problem of the file,
 * its handler references and its routes is reported at once, in one ConfigError.
 * `overrides` win over the file's `app:` block (e.g. `{ logger }` in tests).
 */
export async function loadApp(file: string, overrides: Partial<CoreAppOptions> = {}, options: LoadConfigOptions = {}): Promise<CoreApp> {
  const inspection = await inspectConfig(file, options);
  const { config, issues } = inspection;
  if (!config) throw new ConfigError(inspection.file, issues.items);
  // Handler references are resolved even when the file has other problems, so all are told at once.
  const handlers = await resolveHandlers(config, issues);
  if (!issues.empty) throw new ConfigError(config.file, issues.items);
  return assemble(config, handlers, overrides, issues);
}
