import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CoreAppOptions } from "../app/core-app";
import { appOptionsOf } from "../config/app-options";
import { loadConfig } from "../config/load-config";
import { DEFAULT_STORE_ENGINE } from "../config/schema/app-config";
import { moduleOptionsOf } from "../decorators/module.decorator";
import { createStore, DATA_DIR_ENV, defaultDataDir, type StoreSpec } from "../store/create-store";
import type { Store } from "../store/store";
import { isSource } from "../sources/source";
import { taskMethodsOf } from "../decorators/task.decorator";
import type { LoadedConfig } from "../config/load-config";

/** A task's name and queues, enough to report on them (`status`). */
export interface TaskQueues {
  readonly name: string;
  readonly queue: string;
  readonly emit: string | undefined;
}

/** Which store an app uses: enough to open it without building the app. */
export interface AppStoreTarget {
  readonly appName: string;
  readonly store: StoreSpec;
  readonly dataDir: string | undefined;
  readonly maxQueued: number | undefined;
  readonly maxBytes: number | undefined;
  /** The app's tasks and their queues. */
  readonly tasks: readonly TaskQueues[];
}

/** The store settings of a worker YAML file (validated; handler modules are not loaded). */
export async function storeTargetOfYaml(file: string): Promise<AppStoreTarget> {
  const config = await loadConfig(file);
  return targetOf(config.name, appOptionsOf(config), tasksOfConfig(config));
}

/** The store settings of the @Module class a compiled JS file exports. */
export async function storeTargetOfModule(file: string): Promise<AppStoreTarget> {
  const absolute = resolve(file);
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`cannot load module ${file}: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`);
  }
  const candidates = new Set<Function>();
  const exported = [...Object.values(namespace), ...(isObject(namespace.default) ? Object.values(namespace.default) : [])];
  for (const value of exported) if (typeof value === "function" && moduleOptionsOf(value)) candidates.add(value);
  if (candidates.size === 0) throw new Error(`${file} exports no @Module class (export the class decorated with @Module({ name, handlers }))`);
  if (candidates.size > 1) {
    throw new Error(`${file} exports several @Module classes (${[...candidates].map((c) => c.name).join(", ")}); give a file that exports one`);
  }
  const [moduleClass] = candidates;
  const options = moduleOptionsOf(moduleClass);
  if (!options) throw new Error(`${file}: ${moduleClass.name} is not a @Module class`);
  return targetOf(options.name, options, tasksOfHandlers(options.handlers));
}

/**
 * Opens the app's store for the dead-letter commands. A memory store is refused: its dead
 * letters live in the running process only.
 */
export async function openAppStore(target: AppStoreTarget): Promise<Store> {
  if (target.store === "memory") {
    throw new Error(
      `app "${target.appName}" uses the memory store: its dead letters live only inside the running process and end with it; use a durable store (store: embedded) to manage them from the CLI`,
    );
  }
  if (target.store === "embedded") {
    const dir = target.dataDir ?? defaultDataDir(target.appName);
    if (!existsSync(dir)) {
      throw new Error(
        `app "${target.appName}" has no store at ${dir}: it has not run with this data directory (set app.dataDir, or ${DATA_DIR_ENV}, or run the command where the app runs)`,
      );
    }
  }
  // Not a consumer: it may open the store while the app runs.
  const store = createStore(target.store, { appName: target.appName, dataDir: target.dataDir, maxQueued: target.maxQueued, maxBytes: target.maxBytes, consumer: false });
  await store.open();
  return store;
}

function targetOf(appName: string, options: CoreAppOptions, tasks: readonly TaskQueues[]): AppStoreTarget {
  return { appName, store: options.store ?? DEFAULT_STORE_ENGINE, dataDir: options.dataDir, maxQueued: options.maxQueued, maxBytes: options.maxBytes, tasks };
}

/** As the app names them: a webhook resource feeds queue "webhook:<task>", a queue resource is its own name. */
function tasksOfConfig(config: LoadedConfig): TaskQueues[] {
  return config.tasks.map((task) => ({
    name: task.name,
    queue: config.resources.get(task.source)?.type === "webhook" ? `webhook:${task.name}` : task.source,
    emit: task.emit,
  }));
}

/** The @Task methods of a module's handlers, read from their metadata (nothing is instantiated). */
function tasksOfHandlers(handlers: ReadonlyArray<unknown>): TaskQueues[] {
  return handlers.flatMap((handler) => {
    const cls = (typeof handler === "function" ? handler : (handler as object).constructor) as Function;
    return taskMethodsOf(cls).map(({ method, options }) => {
      const name = options.name ?? `${cls.name}.${String(method)}`;
      return { name, queue: isSource(options.source) ? `${options.source.kind}:${name}` : String(options.source), emit: options.emit };
    });
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
