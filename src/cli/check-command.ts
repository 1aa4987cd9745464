import { resolve } from "node:path";
import { parseCommandArgs } from "./command-args";
import { ConfigError } from "../config/config-error";
import type { CoreApp } from "../app/core-app";
import { silentLogger } from "../util/logger";
import { appOptionsOf } from "../config/app-options";
import { loadApp } from "../config/load-app";
import { loadConfig } from "../config/load-config";
import { DEFAULT_STORE_ENGINE } from "../config/schema/app-config";
import { WebhookSource } from "../sources/webhook/webhook-source";
import { defaultDataDir, describeStore, storeFromEnv } from "../store/create-store";
import { isPostgresUrl, postgresOptionsFromUrl } from "../store/postgres/postgres-options";
import type { Output } from "./output";
import { displayPath } from "./report-error";
import { UsageError } from "./usage";

interface TaskSummary {
  readonly name: string;
  readonly source: string;
  readonly url?: string;
  readonly methods?: readonly string[];
  readonly auth?: string;
  readonly ack?: string;
  readonly emit?: string;
  readonly handler: string;
}

/**
 * `check <worker.yaml>`: everything `run` would refuse before listening (schema, variables,
 * handler modules and exports, route conflicts), without opening the store or listening.
 * Problems go to stderr (through the thrown ConfigError); a summary goes to stdout.
 */
export async function checkCommand(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommandArgs("check", args, { json: { type: "boolean" } });
  if (positionals.length !== 1) throw new UsageError("check takes one argument: the worker YAML file");
  if (!values.json) return check(positionals[0], false, output);
  try {
    return await check(positionals[0], true, output);
  } catch (error) {
    // A script reading --json gets the problems as JSON too (stderr still has them, a line each).
    if (!(error instanceof ConfigError)) throw error;
    const problems = error.issues.map((i) => ({ path: i.path, ...(i.line === undefined ? {} : { line: i.line }), message: i.message }));
    output.out(JSON.stringify({ ok: false, file: error.file ?? resolve(positionals[0]), problems }, null, 2));
    throw error;
  }
}

async function check(file: string, json: boolean, output: Output): Promise<number> {
  const app = await loadApp(file, { logger: silentLogger });
  const config = await loadConfig(file);
  const handlers = new Map(config.tasks.map((t) => [t.name, t.handler.ref]));
  const tasks = summarise(app, handlers);
  const spec = config.app.store ?? storeFromEnv() ?? DEFAULT_STORE_ENGINE;
  // A URL the store would refuse (a password with an unencoded # / ?) fails the check, without showing it.
  if (isPostgresUrl(spec)) postgresOptionsFromUrl(spec);
  const sources = subscribers(tasks);
  // Shown, never the password of a postgres:// URL.
  const store = describeStore(spec);
  const dataDir = store === "embedded" ? (appOptionsOf(config).dataDir ?? defaultDataDir(app.name)) : undefined;
  if (json) {
    output.out(JSON.stringify({ ok: true, file: config.file, app: app.name, store, ...(dataDir ? { dataDir } : {}), tasks, sources }, null, 2));
    return 0;
  }
  const storeText = dataDir ? `store ${store} in ${displayPath(dataDir)}` : `store ${store}`;
  output.out(`${displayPath(config.file)}: OK - app "${app.name}", ${storeText}, ${tasks.length} task${tasks.length === 1 ? "" : "s"}`);
  const width = Math.max(...tasks.map((t) => t.name.length));
  for (const task of tasks) {
    const from = task.url ? `${task.methods?.join("|")} ${task.url}${task.auth ? ` (auth ${task.auth})` : ""}` : `queue ${task.source}`;
    const to = task.emit ? ` -> queue ${task.emit}` : "";
    output.out(`  ${task.name.padEnd(width)}  ${from}${to}  [${task.handler}]`);
  }
  for (const { source, tasks: names } of sources) {
    if (names.length > 1) output.out(`  ${source} feeds ${names.length} tasks, each its own copy: ${names.join(", ")}`);
  }
  const consumed = new Set(tasks.filter((t) => !t.url).map((t) => t.source));
  for (const queue of new Set(tasks.flatMap((t) => (t.emit ? [t.emit] : [])))) {
    if (!consumed.has(queue)) output.out(`  note: no task consumes queue ${queue}; its messages will wait in the store`);
  }
  return 0;
}

function summarise(app: CoreApp, handlers: ReadonlyMap<string, string>): TaskSummary[] {
  return app.tasks.map((task) => {
    const handler = handlers.get(task.name) ?? "?";
    if (task.source instanceof WebhookSource) {
      const { options } = task.source;
      return {
        name: task.name,
        source: task.source.describe(),
        url: task.source.url,
        methods: options.methods,
        ...(options.auth ? { auth: options.auth.scheme } : {}),
        ack: options.ack,
        ...(task.emit ? { emit: task.emit } : {}),
        handler,
      };
    }
    return { name: task.name, source: task.input ?? task.queue, ...(task.emit ? { emit: task.emit } : {}), handler };
  });
}

/** Each source (a webhook's URL, a queue's name) with the tasks it feeds, in order. */
function subscribers(tasks: readonly TaskSummary[]): Array<{ source: string; tasks: string[] }> {
  const bySource = new Map<string, string[]>();
  for (const task of tasks) {
    const source = task.url ? `${task.methods?.join("|")} ${task.url}` : `queue ${task.source}`;
    bySource.set(source, [...(bySource.get(source) ?? []), task.name]);
  }
  return [...bySource].map(([source, names]) => ({ source, tasks: names }));
}
