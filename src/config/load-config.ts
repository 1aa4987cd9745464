import { readFile } from "node:fs/promises";
import { basename, dirname, extname, resolve } from "node:path";
import { ConfigError } from "./config-error";
import { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";
import { aliasAtFault, readYaml } from "./read-yaml";
import { utf8Text } from "./utf8-text";
import { substituteEnv, type Environment } from "./substitute-env";
import { validateConfig, type ValidatedConfig } from "./validate-config";

/** A checked configuration file: what `buildApp` turns into a CoreApp. */
export interface LoadedConfig extends ValidatedConfig {
  /** Absolute path of the YAML file. */
  readonly file: string;
  /** Its directory: handler modules and `app.dataDir` are resolved from here. */
  readonly dir: string;
  /** The app's name: `app.name`, else the file's name without extension. */
  readonly name: string;
  /** Line of the key at a path (`["resources", "github", "port"]`), when it is in the file. */
  lineOf(path: readonly KeySegment[]): number | undefined;
}

export interface LoadConfigOptions {
  /** Variables for `${NAME}` substitution (default `process.env`). */
  readonly env?: Environment;
}

/** What reading a file produced: the config when it parsed, and every problem found. */
export interface ConfigInspection {
  readonly file: string;
  readonly issues: IssueList;
  /** Undefined when the file could not be read or parsed. */
  readonly config: LoadedConfig | undefined;
}

/**
 * Reads, substitutes `${ENV}` in and validates a worker YAML file. Throws a ConfigError listing
 * every problem (syntax, unknown keys, wrong types, missing variables, unknown resource names,
 * duplicate task names, bad auth blocks). Handler modules are not loaded here: see `buildApp`.
 */
export async function loadConfig(file: string, options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const inspection = await inspectConfig(file, options);
  if (!inspection.issues.empty || !inspection.config) throw new ConfigError(inspection.file, inspection.issues.items);
  return inspection.config;
}

/** Like loadConfig, but returns the problems instead of throwing (for tools that report more). */
export async function inspectConfig(file: string, options: LoadConfigOptions = {}): Promise<ConfigInspection> {
  const absolute = resolve(file);
  let bytes: Buffer;
  try {
    bytes = await readFile(absolute);
  } catch (error) {
    const issues = new IssueList();
    issues.push({ path: "", message: `cannot read the file: ${readError(error)}` });
    return { file: absolute, issues, config: undefined };
  }
  const decoded = utf8Text(bytes);
  if (!decoded.ok) {
    const issues = new IssueList();
    issues.push({ path: "", message: decoded.message, line: decoded.line });
    return { file: absolute, issues, config: undefined };
  }
  const parsed = readYaml(decoded.text);
  if (!parsed.ok) {
    const issues = new IssueList();
    for (const issue of parsed.issues) issues.push(issue);
    return { file: absolute, issues, config: undefined };
  }
  const { document, lineOf } = parsed.file;
  const issues = new IssueList(lineOf);
  substituteEnv(document, options.env ?? process.env, issues);
  let raw: unknown;
  try {
    raw = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // An alias whose anchor is missing, or aliases expanding too far: name the alias at fault.
    const alias = aliasAtFault(document);
    const message = `cannot read the YAML: ${error instanceof Error ? error.message : String(error)}`;
    if (alias) issues.add(alias, message);
    else issues.push({ path: "", message });
    return { file: absolute, issues, config: undefined };
  }
  const validated = validateConfig(raw, issues);
  const config: LoadedConfig = {
    ...validated,
    file: absolute,
    dir: dirname(absolute),
    name: validated.app.name ?? nameFromFile(absolute),
    lineOf,
  };
  return { file: absolute, issues, config };
}

/** "worker.yaml" -> "worker"; characters a CoreApp name cannot hold become "-". */
export function nameFromFile(file: string): string {
  const stem = basename(file, extname(file)).replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 100);
  return stem.length > 0 && !/^\.+$/.test(stem) ? stem : "worker";
}

function readError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "no such file";
  if (code === "EACCES") return "permission denied";
  if (code === "EISDIR") return "it is a directory";
  return error instanceof Error ? error.message : String(error);
}
