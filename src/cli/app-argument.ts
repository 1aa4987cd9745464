import { storeTargetOfYaml, type AppStoreTarget } from "./app-store";
import { storeTargetOfModule } from "./module-target";
import { storeTargetOfStore } from "./store-target";
import { UsageError } from "./usage";

/** Which store a read or dead-letter command works on: the app's (YAML file or module), or one named directly. */
export type AppRef = { readonly yaml: string } | { readonly module: string } | { readonly store: string };

export const APP_USAGE = "<worker.yaml | --module file.js | --store postgres-url|data-dir>";

/** The parseArgs options every command taking an AppRef accepts. */
export const APP_OPTIONS = { module: { type: "string" }, store: { type: "string" } } as const;

/**
 * The AppRef of a command line: `--module`, `--store`, or else the last positional (the YAML
 * file). Returns it with the positionals left for the command; undefined when the YAML file
 * is missing.
 */
export function appRefOf(values: { module?: string; store?: string }, positionals: readonly string[], expected: number): { app: AppRef; rest: string[] } | undefined {
  if (values.module !== undefined && values.store !== undefined) {
    throw new UsageError("give --module or --store, not both: --module reads the app (and imports it), --store names the store alone");
  }
  const flag = values.module !== undefined ? "--module" : values.store !== undefined ? "--store" : undefined;
  if (flag !== undefined && positionals.length === expected + 1) {
    throw new UsageError(`give a worker.yaml file or ${flag}, not both (${positionals[expected]} and ${flag})`);
  }
  if (values.module !== undefined) return positionals.length === expected ? { app: { module: values.module }, rest: [...positionals] } : undefined;
  if (values.store !== undefined) return positionals.length === expected ? { app: { store: values.store }, rest: [...positionals] } : undefined;
  if (positionals.length !== expected + 1) return undefined;
  return { app: { yaml: positionals[expected] }, rest: positionals.slice(0, expected) };
}

export function targetOf(app: AppRef): Promise<AppStoreTarget> {
  if ("yaml" in app) return storeTargetOfYaml(app.yaml);
  if ("module" in app) return storeTargetOfModule(app.module);
  return storeTargetOfStore(app.store);
}
