import { CoreApp, type CoreAppOptions } from "../app/core-app";
import type { TaskHandler, TaskOptions } from "../app/task";
import type { TaskConfig } from "./schema/task-config";
import { ConcurrencyConfig } from "./schema/flow-config";
import { flowKeyFunction } from "./flow-key";
import type { WebhookSource } from "../sources/webhook/webhook-source";
import type { WebhookEvent } from "../sources/webhook/webhook-event";
import { appOptionsOf } from "./app-options";
import { attribute, buildSource } from "./build-source";
import { ConsolePlacementError } from "../console/mount-console";
import { ConfigError } from "./config-error";
import { defined, messageOf } from "./defined";
import { IssueList } from "./issue-list";
import type { LoadedConfig } from "./load-config";
import { resolveHandler } from "./resolve-handler";
import { findRouteConflicts } from "./route-conflicts";
import { parseFilter } from "./filter/parse-filter";
import { filterPredicate } from "./filter/filter-predicate";

/**
 * Builds the CoreApp a loaded configuration describes, through the public API: one
 * WebhookSource per webhook resource, one task per `tasks` entry with its handler loaded by
 * dynamic import(). Checks route conflicts (`app.check()`) without listening. Not started.
 */
export async function buildApp(config: LoadedConfig, overrides: Partial<CoreAppOptions> = {}): Promise<CoreApp> {
  const issues = new IssueList(config.lineOf);
  const handlers = await resolveHandlers(config, issues);
  if (!issues.empty) throw new ConfigError(config.file, issues.items);
  return assemble(config, handlers, overrides, issues);
}

/** Loads every task's handler; problems are recorded under `tasks[i].handler.ref`. */
export async function resolveHandlers(config: LoadedConfig, issues: IssueList): Promise<Map<number, TaskHandler>> {
  const handlers = new Map<number, TaskHandler>();
  await Promise.all(
    config.tasks.map(async (task, index) => {
      const ref = task.handler?.ref;
      if (typeof ref !== "string" || ref.length === 0) return;
      try {
        handlers.set(index, await resolveHandler(ref, config.dir));
      } catch (error) {
        issues.add(["tasks", index, "handler", "ref"], messageOf(error));
      }
    }),
  );
  return handlers;
}

/** The CoreApp, its sources and tasks, through the public API; throws a ConfigError listing what failed. */
export function assemble(config: LoadedConfig, handlers: ReadonlyMap<number, TaskHandler>, overrides: Partial<CoreAppOptions>, issues: IssueList): CoreApp {
  let app: CoreApp | undefined;
  try {
    app = new CoreApp(config.name, { ...appOptionsOf(config), ...overrides });
  } catch (error) {
    issues.add(constructorIssueAt(messageOf(error), config.app.name !== undefined), messageOf(error));
  }
  const sources = new Map<string, WebhookSource>();
  for (const [name, resource] of config.resources) {
    if (resource.type !== "webhook") continue;
    const source = buildSource(resource, ["resources", name], issues);
    if (source) sources.set(name, source);
  }
  for (const conflict of findRouteConflicts(sources)) {
    issues.add(["resources", conflict.resource], conflict.message);
  }
  if (app) {
    config.tasks.forEach((task, index) => {
      const handler = handlers.get(index);
      const resource = config.resources.get(task.source);
      const source = resource?.type === "webhook" ? sources.get(task.source) : task.source;
      if (!handler || source === undefined) return;
      try {
        app.task(
          defined({
            name: task.name,
            source,
            emit: task.emit,
            ...flowOptions(task, resource?.type === "webhook"),
            retry: task.retry === undefined ? undefined : defined({ ...task.retry }),
            timeoutMs: task.timeoutMs,
            on: task.on,
            filter: task.filter === undefined ? undefined : compiledFilter(task.filter),
          }),
          handler,
        );
      } catch (error) {
        // "task "x": on needs ..." is about the task's `on` (or `filter`): say so in the key path.
        const about = /^task "[^"]*": (on|filter)\b/.exec(messageOf(error));
        issues.add(about ? ["tasks", index, about[1]] : ["tasks", index], messageOf(error));
      }
    });
  }
  if (app && issues.empty) {
    try {
      app.check();
    } catch (error) {
      if (error instanceof ConsolePlacementError) issues.add(["app", "console"], error.message);
      else {
        const { key, message } = attribute(messageOf(error), ["trustProxy"]);
        issues.add(key.length > 0 ? ["app", ...key] : ["resources"], message);
      }
    }
  }
  if (!issues.empty || !app) throw new ConfigError(config.file, issues.items);
  return app;
}

/** `concurrency`, `rateLimit`, `debounce` and `batch` as the app takes them: key paths become key functions (flow-key.ts). */
export function flowOptions(task: TaskConfig, webhook: boolean): Pick<TaskOptions, "concurrency" | "rateLimit" | "debounce" | "batch"> {
  const out: Pick<TaskOptions, "concurrency" | "rateLimit" | "debounce" | "batch"> = {};
  const { concurrency, rateLimit, debounce, batch } = task;
  const keyOf = (path: string | undefined) => (path === undefined ? undefined : flowKeyFunction(path, webhook));
  if (debounce !== undefined) out.debounce = defined({ periodMs: debounce.periodMs, maxWaitMs: debounce.maxWaitMs, key: keyOf(debounce.key) });
  if (batch !== undefined) out.batch = defined({ maxSize: batch.maxSize, maxWaitMs: batch.maxWaitMs, key: keyOf(batch.key) });
  if (typeof concurrency === "number") out.concurrency = concurrency;
  else if (concurrency instanceof ConcurrencyConfig) {
    out.concurrency = defined({ limit: concurrency.limit, perProcess: concurrency.perProcess, key: concurrency.key === undefined ? undefined : flowKeyFunction(concurrency.key, webhook) });
  }
  if (rateLimit !== undefined) out.rateLimit = defined({ limit: rateLimit.limit, periodMs: rateLimit.periodMs, key: rateLimit.key === undefined ? undefined : flowKeyFunction(rateLimit.key, webhook) });
  return out;
}

/** A filter validateConfig accepted, as a predicate (it parses without issues by then). */
function compiledFilter(spec: unknown): ((event: unknown) => boolean) | undefined {
  const node = parseFilter(spec, ["filter"], new IssueList());
  if (node === undefined) return undefined;
  const predicate = filterPredicate(node);
  // validateConfig allows filters on webhook tasks only: the event is a WebhookEvent.
  return (event) => predicate(event as WebhookEvent);
}

/** The key an error of new CoreApp is about: its name, its store, its console, or none (the environment's log level). */
function constructorIssueAt(message: string, named: boolean): string[] {
  if (message.startsWith("CoreApp: name")) return named ? ["app", "name"] : [];
  if (message.startsWith("unknown store")) return ["app", "store"];
  if (message.startsWith("console.")) return ["app", "console"];
  return [];
}
