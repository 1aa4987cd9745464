import { join, resolve } from "node:path";
import type { Store } from "./store";
import { EmbeddedStore } from "./embedded/embedded-store";
import { MemoryStore } from "./memory/memory-store";
import { PostgresStore } from "./postgres/postgres-store";
import { isPostgresUrl, postgresOptionsFromUrl, redactPostgresUrl, type PostgresUrl } from "./postgres/postgres-options";
import type { Logger } from "../util/logger";
import { didYouMean } from "../util/did-you-mean";

/**
 * An engine by name, a PostgreSQL connection string, or a store built by the caller (used as
 * is). Any string is taken, so that a URL read from the environment needs no cast; one that is
 * none of these is refused when the app is built.
 */
export type StoreSpec = "memory" | "embedded" | PostgresUrl | (string & Record<never, never>) | Store;

export interface CreateStoreOptions {
  /** Names the default data directory. */
  readonly appName: string;
  /** Directory of the embedded store (default: see `defaultDataDir`). */
  readonly dataDir?: string;
  /** Most messages one queue may hold (engine default when unset). */
  readonly maxQueued?: number;
  /** Most bytes the embedded store's data may occupy (default: only the disk limits it); on the memory store, its dead letters. */
  readonly maxBytes?: number;
  /** False for tools that manage a store without consuming its queues (no consumer lock). */
  readonly consumer?: boolean;
  /** Where an engine that recovers by itself logs its failures and recoveries (a damaged file, a lost directory, a database that went away). */
  readonly logger?: Logger;
  /** Most events the memory store's history keeps (default 10,000). */
  readonly historyMaxEvents?: number;
}

/** Environment variable naming the store ("memory", "embedded" or a postgres:// URL) when the app does not. */
export const STORE_ENV = "WEBHOOK_TASKS_STORE";

/** The store $WEBHOOK_TASKS_STORE names, or undefined when it is unset or empty; throws when it names none. */
export function storeFromEnv(env: NodeJS.ProcessEnv = process.env): StoreSpec | undefined {
  const value = env[STORE_ENV];
  if (value === undefined || value === "") return undefined;
  if (value === "memory" || value === "embedded" || isPostgresUrl(value)) return value;
  // Shown as the app's store option is: a URL of another form (or a mistyped one, "postgres:/u:pw@db") only by its scheme, if any.
  throw new TypeError(`${STORE_ENV}=${unknownStoreName(value)}: use "memory", "embedded" or a postgres:// URL`);
}

/** The store spec as it may be shown: a URL without its password. */
export function describeStore(spec: StoreSpec): string {
  if (typeof spec !== "string") return spec.engine;
  return isPostgresUrl(spec) ? redactPostgresUrl(spec) : spec;
}

/** Environment variable naming the embedded store's directory when the app does not. */
export const DATA_DIR_ENV = "WEBHOOK_TASKS_DATA_DIR";

/** $WEBHOOK_TASKS_DATA_DIR, else `.data/<app name>` under the working directory. */
export function defaultDataDir(appName: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string {
  const fromEnv = env[DATA_DIR_ENV];
  return resolve(cwd, fromEnv !== undefined && fromEnv !== "" ? fromEnv : join(".data", appName));
}

export function createStore(spec: StoreSpec, options: CreateStoreOptions): Store {
  if (spec === "memory") {
    const limits = { ...(options.maxQueued === undefined ? {} : { maxQueued: options.maxQueued }), ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }) };
    return new MemoryStore(limits, { historyMaxEvents: options.historyMaxEvents, logger: options.logger });
  }
  if (spec === "embedded") {
    return new EmbeddedStore({
      dir: options.dataDir !== undefined ? resolve(options.dataDir) : defaultDataDir(options.appName),
      maxQueued: options.maxQueued,
      maxBytes: options.maxBytes,
      consumer: options.consumer,
      logger: options.logger,
    });
  }
  if (isPostgresUrl(spec)) {
    return new PostgresStore({ ...postgresOptionsFromUrl(spec), maxQueued: options.maxQueued, consumer: options.consumer, logger: options.logger });
  }
  checkStoreSpec(spec);
  return spec as Store;
}

/** Throws the TypeError an unknown store gets, so that an app refuses it when built, not only at start(). */
export function checkStoreSpec(spec: StoreSpec): void {
  if (spec === "memory" || spec === "embedded" || isPostgresUrl(spec)) return;
  if (typeof spec === "object" && spec !== null && typeof spec.enqueue === "function") return;
  // An object is not printed either: options meant for new PostgresStore(...) hold a password.
  const shown = typeof spec === "string" ? unknownStoreName(spec) : typeof spec === "object" && spec !== null ? "(an object that is not a Store, such as PostgresStore's options without new PostgresStore)" : String(spec);
  throw new TypeError(`unknown store ${shown}: use "memory", "embedded", a postgres:// URL or a Store instance`);
}

/**
 * A misspelt engine name as given, with its guess; anything else only by its scheme: a URL may
 * hold a password, and a bare word may be one (a password variable given by mistake).
 */
function unknownStoreName(spec: string): string {
  const guess = /^[A-Za-z0-9_-]{1,40}$/.test(spec) ? didYouMean(spec, ["memory", "embedded"]) : undefined;
  if (guess !== undefined) return `${JSON.stringify(spec)} (did you mean "${guess}"?)`;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(spec)?.[0];
  return scheme === undefined ? "(a string that is not shown: it may hold a password)" : `"${scheme}…" (the rest not shown: it may hold a password)`;
}
