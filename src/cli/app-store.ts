import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { appOptionsOf } from "../config/app-options";
import { ConfigError } from "../config/config-error";
import { inspectConfig } from "../config/load-config";
import { DEFAULT_STORE_ENGINE } from "../config/schema/app-config";
import { createStore, DATA_DIR_ENV, defaultDataDir, describeStore, storeFromEnv, type StoreSpec } from "../store/create-store";
import { storeFailureDetail } from "../store/store-errors";
import type { Store } from "../store/store";
import { consumerQueue } from "../app/task-registry";
import { claimFlowOf, resolveFlow, type TaskFlow } from "../app/flow/flow-options";
import { DEFAULT_CONCURRENCY } from "../app/task-registry";
import { flowOptions } from "../config/build-app";
import type { TaskConfig } from "../config/schema/task-config";
import type { ClaimFlow } from "../store/store";
import type { LoadedConfig } from "../config/load-config";
import { isPostgresUrl } from "../store/postgres/postgres-options";
import { schemaHoldsStore } from "./store-target";

/** A task's name and queues, enough to report on them (`status`). */
export interface TaskQueues {
  readonly name: string;
  /** Its physical queue, as the app names it. */
  readonly queue: string;
  /** The named queue it consumes, if any. */
  readonly input?: string | undefined;
  readonly emit: string | undefined;
  /** Its flow limits, for counting the messages they hold back (`status`). */
  readonly flow?: ClaimFlow | undefined;
  /** Its flow limits with their key functions, for a replay's copy (known when the app is: not with --store). */
  readonly replayFlow?: TaskFlow | undefined;
  /** It has `debounce` or `batch`: its waiting messages collect in groups (`status`). */
  readonly grouped?: boolean;
}

/** Which store to open, and what is known of the app using it: enough to open it without building the app. */
export interface AppStoreTarget {
  /** The app's name; undefined with `--store`, where no app is read. */
  readonly appName: string | undefined;
  /** How messages name it: `app "github-worker"`, or `store <url without its password>`. */
  readonly label: string;
  readonly store: StoreSpec;
  readonly dataDir: string | undefined;
  readonly maxQueued: number | undefined;
  readonly maxBytes: number | undefined;
  /** The app's tasks and their queues; undefined when unknown (`--store`). */
  readonly tasks: readonly TaskQueues[] | undefined;
  /** True when the app turns its event history off (`history: false`); unknown with `--store`. */
  readonly historyOff?: boolean;
}

/** The store settings an app declares (`app:` block, @Module options, app.storeSettings). */
export interface StoreSettings {
  readonly store?: StoreSpec;
  readonly dataDir?: string;
  readonly maxQueued?: number;
  readonly maxBytes?: number;
  /** The app's `history` option: `false` turns it off. */
  readonly history?: unknown;
}

/**
 * The store settings of a worker YAML file (handler modules are not loaded). Only the `app:`
 * block must be valid: the dead-letter commands open the store, so the sources' secrets
 * (`${GH_SECRET}`) need not be set where they run.
 */
export async function storeTargetOfYaml(file: string): Promise<AppStoreTarget> {
  const { file: absolute, issues, config } = await inspectConfig(file);
  // Only what finds the store counts: a secret of a sender or of the console is not needed to read it.
  const storeIssues = issues.items.filter((issue) => issue.path === "" || issue.path === "app" || (issue.path.startsWith("app.") && !issue.path.startsWith("app.console")));
  if (!config || storeIssues.length > 0) throw new ConfigError(absolute, storeIssues.length > 0 ? storeIssues : issues.items);
  return appTarget(config.name, appOptionsOf(config), tasksOfConfig(config));
}

/**
 * Opens the target's store without consuming (the app may be running). Refused: a memory
 * store (its messages live in the running process only), a store given as an instance, and an
 * embedded directory where no store ever ran (rather than creating an empty one).
 */
export async function openAppStore(target: AppStoreTarget): Promise<Store> {
  if (target.store === "memory") {
    throw new Error(
      `${target.label} uses the memory store: its dead letters live only inside the running process and end with it; use a durable store (store: embedded, or a postgres:// URL) to manage them from the CLI`,
    );
  }
  if (typeof target.store !== "string") {
    throw new Error(`${target.label} gives its store as an object: the CLI cannot open it apart from the app; name it with --store <postgres-url | data-dir>`);
  }
  if (target.store === "embedded") {
    const dir = storeLocation(target);
    // A directory named directly must hold a store; an app's may be new and empty (made beforehand).
    if (target.appName === undefined ? !existsSync(join(dir, "data.mdb")) : !existsSync(dir)) {
      throw new Error(
        target.appName === undefined
          ? `no embedded store at ${dir} (no data.mdb there): give the data directory of an app that ran`
          : `${target.label} has no store at ${dir}: it has not run with this data directory (set app.dataDir, or ${DATA_DIR_ENV}, or run the command where the app runs)`,
      );
    }
  }
  if (target.appName !== undefined && isPostgresUrl(target.store)) {
    // As for a data directory: a read must not create the schema of an app that never ran there (a typo in ?schema=, the wrong database).
    let held: { found: boolean; schema: string };
    try {
      held = await schemaHoldsStore(target.store);
    } catch (error) {
      throw new Error(`${target.label}: cannot open its postgres store: ${storeFailureDetail(error)}`);
    }
    if (!held.found) {
      throw new Error(`${target.label} has no store in schema "${held.schema}" at ${describeStore(target.store)}: it has not run with this store (check app.store and its ?schema=)`);
    }
  }
  // Not a consumer: it may open the store while the app runs.
  const store = createStore(target.store, { appName: target.appName ?? "cli", dataDir: target.dataDir, maxQueued: target.maxQueued, maxBytes: target.maxBytes, consumer: false });
  try {
    await store.open();
  } catch (error) {
    throw new Error(`${target.label}: cannot open its ${describeStore(target.store)} store: ${storeFailureDetail(error)}`);
  }
  const failure = store.failure;
  if (failure !== undefined) {
    // An engine that retries by itself (PostgreSQL down) would only refuse every command: say why now.
    await store.close().catch(() => undefined);
    throw new Error(`${target.label}: cannot open its ${store.engine} store: ${storeFailureDetail(failure)}`);
  }
  return store;
}

/** Where the target's store is, as it may be shown: the embedded store's directory, or the URL without its password. */
export function storeLocation(target: AppStoreTarget): string {
  if (target.store === "embedded") return resolve(target.dataDir ?? defaultDataDir(target.appName ?? ""));
  return describeStore(target.store);
}

/** A target for a known app; its store as the app would resolve it. */
export function appTarget(appName: string, settings: StoreSettings, tasks: readonly TaskQueues[]): AppStoreTarget {
  return {
    appName,
    label: `app "${appName}"`,
    store: settings.store ?? storeFromEnv() ?? DEFAULT_STORE_ENGINE,
    dataDir: settings.dataDir,
    maxQueued: settings.maxQueued,
    maxBytes: settings.maxBytes,
    tasks: physical(tasks.map((t) => ({ name: t.name, queue: t.queue, input: t.input, emit: t.emit, flow: t.flow, replayFlow: t.replayFlow, grouped: t.grouped }))),
    historyOff: settings.history === false,
  };
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
    return { name: task.name, queue: webhook ? `webhook:${task.name}` : task.source, input: webhook ? undefined : task.source, emit: task.emit, flow: claimFlowOf(task.concurrency, task.rateLimit), replayFlow: replayFlowOfConfig(task, webhook), grouped: task.debounce !== undefined || task.batch !== undefined };
  });
}

/** A YAML task's limits as the app builds them: its key paths are key functions the CLI can run. */
function replayFlowOfConfig(task: TaskConfig, webhook: boolean): TaskFlow | undefined {
  const options = flowOptions(task, webhook);
  return resolveFlow(options.concurrency, options.rateLimit, `task "${task.name}"`, DEFAULT_CONCURRENCY).flow;
}
