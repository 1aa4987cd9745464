import { createRequire } from "node:module";
import { isAbsolute, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TaskHandler } from "../app/task";
import { HANDLER_REF } from "./schema/task-config";

/** Why a handler reference cannot be used; the message names the module and export. */
export class HandlerRefError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HandlerRefError";
  }
}

export interface HandlerRef {
  /** Module path relative to the YAML file ("./handlers.js"), absolute, or a package name. */
  readonly module: string;
  readonly exportName: string;
}

export function parseHandlerRef(ref: string): HandlerRef | undefined {
  const match = HANDLER_REF.exec(ref);
  return match ? { module: match[1], exportName: match[2] } : undefined;
}

/**
 * Loads the function a `<module_path>:<export_name>` reference names. The module is resolved
 * from the YAML file's directory (a relative or absolute path, or a package installed where
 * the file is), and loaded with dynamic `import()`, so ES modules and CommonJS both work.
 * For CommonJS, `module.exports.name` counts as the export `name`.
 */
export async function resolveHandler(ref: string, baseDir: string): Promise<TaskHandler> {
  const parsed = parseHandlerRef(ref);
  if (!parsed) throw new HandlerRefError('must be "<module_path>:<export_name>", e.g. "./handlers.js:onPush"');
  const file = locate(parsed.module, baseDir);
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(isAbsolute(file) ? pathToFileURL(file).href : file)) as Record<string, unknown>;
  } catch (error) {
    throw new HandlerRefError(`cannot load module "${parsed.module}" (${file}): ${firstLine(error)}${typeScriptHint(error, file)}`);
  }
  const exported = lookup(namespace, parsed.exportName);
  if (exported === undefined) {
    const names = exportNames(namespace);
    throw new HandlerRefError(
      `module "${parsed.module}" has no export "${parsed.exportName}"${names.length > 0 ? ` (it exports: ${names.join(", ")})` : " (it exports nothing)"}`,
    );
  }
  if (typeof exported !== "function") {
    throw new HandlerRefError(`export "${parsed.exportName}" of "${parsed.module}" is ${describe(exported)}, not a function (ctx, event) => result`);
  }
  if (/^class[\s{]/.test(Function.prototype.toString.call(exported))) {
    throw new HandlerRefError(`export "${parsed.exportName}" of "${parsed.module}" is a class; export a function (ctx, event) => result`);
  }
  return exported as TaskHandler;
}

/** Node (before type stripping) refuses a `.ts` file by its extension alone: say what to give instead. */
function typeScriptHint(error: unknown, file: string): string {
  if ((error as NodeJS.ErrnoException).code !== "ERR_UNKNOWN_FILE_EXTENSION" || !/\.[cm]?ts$/.test(file)) return "";
  return " (a TypeScript file: compile it with tsc and reference the .js file it gives)";
}

/** Resolves the module file as Node would from a file in `baseDir`; bare names that are no package fall back to a file in `baseDir`. */
function locate(specifier: string, baseDir: string): string {
  const require = createRequire(join(baseDir, "__worker_config__.js"));
  const relative = specifier.startsWith(".") || isAbsolute(specifier);
  try {
    return require.resolve(specifier);
  } catch (error) {
    if (!relative) {
      try {
        return require.resolve(`./${specifier}`);
      } catch {
        // report the package lookup's failure below
      }
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "MODULE_NOT_FOUND") {
      throw new HandlerRefError(`cannot find module "${specifier}" (${relative ? `looked in ${baseDir}` : `no such package or file from ${baseDir}`})`);
    }
    throw new HandlerRefError(`cannot resolve module "${specifier}" from ${baseDir}: ${firstLine(error)}`);
  }
}

function lookup(namespace: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(namespace, name) && namespace[name] !== undefined) return namespace[name];
  const fallback = namespace.default;
  if (name !== "default" && (typeof fallback === "object" || typeof fallback === "function") && fallback !== null) {
    const value = (fallback as Record<string, unknown>)[name];
    if (value !== undefined && Object.hasOwn(fallback, name)) return value;
  }
  return undefined;
}

function exportNames(namespace: Record<string, unknown>): string[] {
  const names = new Set(Object.keys(namespace).filter((n) => n !== "default" && n !== "__esModule"));
  const fallback = namespace.default;
  if (typeof fallback === "object" && fallback !== null) for (const n of Object.keys(fallback)) if (n !== "__esModule") names.add(n);
  if (fallback !== undefined && typeof fallback !== "object") names.add("default");
  return [...names].sort();
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0];
}
