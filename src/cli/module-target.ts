import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CoreApp } from "../app/core-app";
import { moduleOptionsOf } from "../decorators/module.decorator";
import { taskMethodsOf } from "../decorators/task.decorator";
import { isSource } from "../sources/source";
import { appTarget, type AppStoreTarget, type TaskQueues } from "./app-store";
import { claimFlow, claimFlowOf, resolveFlow } from "../app/flow/flow-options";
import { DEFAULT_CONCURRENCY } from "../app/task-registry";

/** An app a module exports: a CoreApp instance, or a @Module class. */
type FoundApp = { readonly kind: "instance"; readonly app: CoreApp; readonly exportName: string } | { readonly kind: "module"; readonly cls: Function; readonly exportName: string };

/**
 * The store and tasks of the app a compiled JS file exports: a CoreApp instance
 * (`export const app = new CoreApp(...)`, or the default export) or a @Module class. An
 * instance is read as it is, with the tasks added by `app.task(...)` as well as decorated
 * ones; a @Module class is read from its metadata (nothing is instantiated). The file is
 * imported, so its top-level code runs: `--store` is the way that imports nothing.
 */
export async function storeTargetOfModule(file: string): Promise<AppStoreTarget> {
  const namespace = await importModule(file);
  const found = appsOf(namespace);
  // createApp(Module) builds an instance of the module's name: the instance covers the class.
  const instanceNames = new Set(found.flatMap((f) => (f.kind === "instance" ? [f.app.name] : [])));
  const apps = found.filter((f) => f.kind === "instance" || !instanceNames.has(moduleOptionsOf(f.cls)?.name ?? ""));
  if (apps.length === 0) {
    const names = exportNames(namespace);
    // Most often the program that starts the app (main.js, with bootstrap or app.run): importing it started it too.
    if (names.length === 0) {
      throw new Error(`${file} exports nothing: give the file that exports the app (its CoreApp instance or @Module class), not the one that starts it; or --store <data-dir | postgres-url>, which imports no code`);
    }
    throw new Error(
      `${file} exports no app (found ${names.length === 0 ? "no exports" : names.join(", ")}): export a CoreApp instance (export const app = new CoreApp(...)) or a @Module class`,
    );
  }
  if (apps.length > 1) throw new Error(`${file} exports ${apps.length} apps (${apps.map(describe).join(", ")}); give a file that exports one`);
  const [app] = apps;
  if (app.kind === "instance") return appTarget(app.app.name, app.app.storeSettings, app.app.tasks.map((t) => ({ name: t.name, queue: t.queue, input: t.input, emit: t.emit, flow: t.flow === undefined ? undefined : claimFlow(t.flow), replayFlow: t.flow, grouped: t.group !== undefined })));
  const options = moduleOptionsOf(app.cls);
  if (!options) throw new Error(`${file}: ${app.cls.name} is not a @Module class`);
  return appTarget(options.name, options, tasksOfHandlers(options.handlers));
}

async function importModule(file: string): Promise<Record<string, unknown>> {
  try {
    return (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`cannot load module ${file}: ${(error instanceof Error ? error.message : String(error)).split("\n")[0]}`);
  }
}

/** CoreApp instances and @Module classes among the exports (and a CommonJS default's own), each once. */
function appsOf(namespace: Record<string, unknown>): FoundApp[] {
  const entries = Object.entries(namespace);
  const inner = namespace.default;
  if (isObject(inner) && !isCoreApp(inner)) entries.push(...Object.entries(inner));
  const seen = new Set<unknown>();
  const found: FoundApp[] = [];
  for (const [exportName, value] of entries) {
    if (seen.has(value)) continue;
    seen.add(value);
    if (isCoreApp(value)) found.push({ kind: "instance", app: value, exportName });
    else if (typeof value === "function" && moduleOptionsOf(value)) found.push({ kind: "module", cls: value, exportName });
  }
  return found;
}

/** What a file exports, as its author named it (a CommonJS module's `exports.x` rather than "default"). */
function exportNames(namespace: Record<string, unknown>): string[] {
  const inner = namespace.default;
  const names = Object.keys(namespace).filter((k) => k !== "__esModule" && !(k === "default" && isObject(inner)));
  if (isObject(inner)) names.push(...Object.keys(inner).filter((k) => k !== "__esModule"));
  return [...new Set(names)].sort();
}

function describe(found: FoundApp): string {
  if (found.kind === "instance") return `CoreApp "${found.app.name}" as ${found.exportName}`;
  return `@Module class ${found.cls.name} ("${moduleOptionsOf(found.cls)?.name ?? "?"}") as ${found.exportName}`;
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
      return { name, queue: isSource(source) ? `${source.kind}:${name}` : String(source), input, emit: options.emit === undefined ? undefined : String(options.emit), flow: claimFlowOf(options.concurrency, options.rateLimit), replayFlow: resolveFlow(options.concurrency, options.rateLimit, `task "${name}"`, DEFAULT_CONCURRENCY).flow, grouped: options.debounce !== undefined || options.batch !== undefined };
    });
  });
}

/** By class, or by shape: an app built with another copy of the package is a CoreApp too. */
function isCoreApp(value: unknown): value is CoreApp {
  if (value instanceof CoreApp) return true;
  return isObject(value) && value.constructor?.name === "CoreApp" && typeof value.name === "string" && "storeSettings" in value && "tasks" in value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
