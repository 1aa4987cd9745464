import { resolve } from "node:path";
import { CoreApp, type CoreAppOptions } from "../app/core-app";
import type { TaskHandler } from "../app/task";
import { WebhookSource } from "../sources/webhook/webhook-source";
import type { WebhookSourceOptions } from "../sources/webhook/webhook-options";
import { WebhookResponse } from "../sources/webhook/webhook-response";
import { buildAuth } from "./auth-registry";
import { ConfigError } from "./config-error";
import { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";
import { inspectConfig, type LoadConfigOptions, type LoadedConfig } from "./load-config";
import { resolveHandler } from "./resolve-handler";
import { findRouteConflicts } from "./route-conflicts";
import type { WebhookResourceConfig } from "./schema/webhook-resource-config";

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

/** The CoreApp options the `app:` block gives (dataDir resolved from the YAML file's directory). */
export function appOptionsOf(config: LoadedConfig): CoreAppOptions {
  const app = config.app;
  return defined({
    store: app.store,
    dataDir: app.dataDir === undefined ? undefined : resolve(config.dir, app.dataDir),
    maxQueued: app.maxQueued,
    logLevel: app.logLevel,
    trustProxy: app.trustProxy,
    shutdownTimeoutMs: app.shutdownTimeoutMs,
    http: app.http === undefined ? undefined : defined({ ...app.http }),
  });
}

async function resolveHandlers(config: LoadedConfig, issues: IssueList): Promise<Map<number, TaskHandler>> {
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

function assemble(config: LoadedConfig, handlers: ReadonlyMap<number, TaskHandler>, overrides: Partial<CoreAppOptions>, issues: IssueList): CoreApp {
  let app: CoreApp | undefined;
  try {
    app = new CoreApp(config.name, { ...appOptionsOf(config), ...overrides });
  } catch (error) {
    issues.add(config.app.name === undefined ? [] : ["app", "name"], messageOf(error));
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
            concurrency: task.concurrency,
            retry: task.retry === undefined ? undefined : defined({ ...task.retry }),
          }),
          handler,
        );
      } catch (error) {
        issues.add(["tasks", index], messageOf(error));
      }
    });
  }
  if (app && issues.empty) {
    try {
      app.check();
    } catch (error) {
      issues.add(["resources"], messageOf(error));
    }
  }
  if (!issues.empty || !app) throw new ConfigError(config.file, issues.items);
  return app;
}

function buildSource(resource: WebhookResourceConfig, path: KeySegment[], issues: IssueList): WebhookSource | undefined {
  const auth = resource.auth === undefined ? undefined : buildAuth(resource.auth, [...path, "auth"], issues);
  if (resource.auth !== undefined && auth === undefined) return undefined;
  let response: WebhookResponse | undefined;
  if (resource.response !== undefined) {
    try {
      response = new WebhookResponse(defined({ ...resource.response }));
    } catch (error) {
      issues.add([...path, "response"], messageOf(error).replace(/^WebhookResponse: /, ""));
      return undefined;
    }
  }
  const options: WebhookSourceOptions = defined({
    path: resource.path,
    methods: resource.methods,
    host: resource.host,
    port: resource.port,
    auth,
    parser: resource.parser,
    response,
    maxBodyBytes: resource.maxBodyBytes,
    ack: resource.ack,
    ackTimeoutMs: resource.ackTimeoutMs,
    reply: resource.reply,
    trustProxy: resource.trustProxy,
    publicUrl: resource.publicUrl,
    dedupe: resource.dedupe === undefined ? undefined : typeof resource.dedupe === "string" ? resource.dedupe : defined({ ...resource.dedupe }),
  } as WebhookSourceOptions);
  try {
    return new WebhookSource(options);
  } catch (error) {
    issues.add(path, messageOf(error).replace(/^WebhookSource\([^)]*\): /, ""));
    return undefined;
  }
}

/** A copy without the keys whose value is undefined, so library defaults apply. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
