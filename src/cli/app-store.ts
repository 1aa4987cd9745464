import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CoreAppOptions } from "../app/core-app";
import { appOptionsOf } from "../config/app-options";
import { ConfigError } from "../config/config-error";
import { inspectConfig } from "../config/load-config";
import { DEFAULT_STORE_ENGINE } from "../config/schema/app-config";
import { moduleOptionsOf } from "../decorators/module.decorator";
import { createStore, DATA_DIR_ENV, defaultDataDir, storeFromEnv, type StoreSpec } from "../store/create-store";
import { storeFailureDetail } from "../store/store-errors";
import type { Store } from "../store/store";
import { isSource } from "../sources/source";
import { taskMethodsOf } from "../decorators/task.decorator";
import { consumerQueue } from "../app/task-registry";
import type { LoadedConfig } from "../config/load-config";

/** A task's name and queues, enough to report on them (`status`). */
export interface TaskQueues {
  readonly name: string;
  /** Its physical queue, as the app names it. */
  readonly queue: string;
  /** The named queue it consumes, if any. */
  readonly input?: string | undefined;
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

/**
 * The store settings of a worker YAML file (handler modules are not loaded). Only the `app:`
 * block must be valid: the dead-letter commands open the store, so the sources' secrets
 * (`${GH_SECRET}`) need not be set where they run.
 */
export async function storeTargetOfYaml(file: string): Promise<AppStoreTarget> {
  const { file: absolute, issues, config } = await inspectConfig(file);
  const storeIssues = issues.items.filter((issue) => issue.path === "" || issue.path === "app" || issue.path.startsWith("app."));
  if (!config || storeIssues.length > 0) throw new ConfigError(absolute, storeIssues.length > 0 ? storeIssues : issues.items);
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
      `app "${target.appName}" uses the memory store: its dead letters live only inside the running process and end with it; use a durable store (store: embedded, or a postgres:// URL) to manage them from the CLI`,
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
  const failure = store.failure;
  if (failure !== undefined) {
    // An engine that retries by itself (PostgreSQL down) would only refuse every command: say why now.
    await store.close().catch(() => undefined);
    throw new Error(`app "${target.appName}": cannot open its ${store.engine} store: ${storeFailureDetail(failure)}`);
  }
  return store;
}

function targetOf(appName: string, options: CoreAppOptions, tasks: readonly TaskQueues[]): AppStoreTarget {
  return { appName, store: options.store ?? storeFromEnv() ?? DEFAULT_STORE_ENGINE, dataDir: options.dataDir, maxQueued: options.maxQueued, maxBytes: options.maxBytes, tasks: physical(tasks) };
}

/** A named queue's consumers each read `<queue>@<task>` when there are several, as the app names them. */
function physical(tasks: readonly TaskQueues[]): TaskQueues[] {
  const consumers = new Map<string, number>();
  for (const t of tasks) if (t.input !== undefined) consumers.set(t.input, (consumers.get(t.input) ?? 0) + 1);
  return tasks.map((t) => (t.input !== undefined && consumers.get(t.input)! > 1 ? { ...t, queue: consumerQueue(t.input, t.name) } : t));
}

/** As the app names them: a webhook resource feeds queue "webhook:<task>", a queue resource is its own name. */
function tasksOfConfig(config: LoadedConfig): TaskQueues[] {
  return config.tasks.map((task) => {
    const webhook = config.resources.get(task.source)?.type === "webhook";
    return { name: task.name, queue: webhook ? `webhook:${task.name}` : task.source, input: webhook ? undefined : task.source, emit: task.emit };
  });
}

/** The @Task methods of a module's handlers, read from their metadata (nothing is instantiated). */
function tasksOfHandlers(handlers: ReadonlyArray<unknown>): TaskQueues[] {
  return handlers.flatMap((handler) => {
    const cls = (typeof handler === "function" ? handler : (handler as object).constructor) as Function;
    return taskMethodsOf(cls).map(({ method, options }) => {
      // A Queue token prints as its name.
      const name = options.name ?? `${cls.name}.${String(method)}`;
      const source: unknown = options.source;
      const input = isSource(source) ? undefined : String(source);
      return { name, queue: input ?? `${(source as { kind: string }).kind}:${name}`, input, emit: options.emit === undefined ? undefined : String(options.emit) };
    });
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
