import type { Logger } from "../../util/logger";
import { credentialsMisread } from "./url-credentials";
import type { HistoryWriterTuning } from "./history/postgres-history";

/** A connection string naming a PostgreSQL database: the store spec that selects this engine. */
export type PostgresUrl = `postgres://${string}` | `postgresql://${string}`;

/** One statement's text and parameters, as node-postgres takes them. */
export interface PostgresQuery {
  readonly text: string;
  /** Names a prepared statement: parsed once per connection (node-postgres `name`). */
  readonly name?: string;
  readonly values?: unknown[];
  /** Client-side limit in milliseconds (node-postgres `query_timeout`). */
  readonly query_timeout?: number;
}

export interface PostgresQueryResult {
  readonly rows: Array<Record<string, unknown>>;
  readonly rowCount: number | null;
}

/** A client checked out of a pool (node-postgres `PoolClient`). */
export interface PostgresPoolClient {
  query(query: PostgresQuery): Promise<PostgresQueryResult>;
  release(destroy?: Error | boolean): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  removeAllListeners(event?: string): unknown;
}

/** What the store uses of a connection pool; a node-postgres `pg.Pool` is one. */
export interface PostgresPool {
  query(query: PostgresQuery): Promise<PostgresQueryResult>;
  connect(): Promise<PostgresPoolClient>;
  on(event: "error", listener: (error: Error, client: unknown) => void): unknown;
  removeListener(event: "error", listener: (error: Error, client: unknown) => void): unknown;
  end(): Promise<void>;
}

export interface PostgresStoreOptions {
  /** postgres://user:password@host:5432/database (also postgresql://); or give `pool`. */
  readonly connectionString?: string;
  /** A pool of your own: used as is, never ended by the store. Pool size and timeouts are then yours. */
  readonly pool?: PostgresPool;
  /** Schema holding the store's tables, created at open (default "webhook_tasks"). */
  readonly schema?: string;
  /** How long a claim holds a message without news from its claimer (default 30 s); renewed every third of it. */
  readonly leaseMs?: number;
  /** Connections of the store's own pool (default 10; one of them listens for notifications). */
  readonly poolSize?: number;
  /** Longest a statement may run before it fails (default 5 s). */
  readonly statementTimeoutMs?: number;
  /** Longest a new connection may take (default 3 s). */
  readonly connectionTimeoutMs?: number;
  /** Most messages one queue may hold before `admit` refuses (default 10,000,000). */
  readonly maxQueued?: number;
  /**
   * Whether this process consumes the queues (default true): it then listens for
   * notifications, renews its leases and takes back expired ones. Tools that only manage dead
   * letters pass false.
   */
  readonly consumer?: boolean;
  /** Where failures are logged, at most a line every few seconds per kind (default: not logged). */
  readonly logger?: Logger;
  /** How often the cached queue depths that `admit` uses are counted again (default 2 s). */
  readonly depthRefreshMs?: number;
  /** How often expired state entries are removed (default one minute). */
  readonly sweepIntervalMs?: number;
  /** How often an unreachable database is tried again (default one second). */
  readonly probeIntervalMs?: number;
  /**
   * Whether the frequent statements are named prepared statements, parsed and planned once per
   * connection (default true). Pass false behind a pooler that cannot keep them (PgBouncer in
   * transaction mode before 1.21, or without `max_prepared_statements`).
   */
  readonly preparedStatements?: boolean;
  /**
   * How the event history's notes are written: batched every `delayMs` (default 100 ms), at most
   * `maxBatchNotes` (1,000) per statement, at most `maxBuffered` (50,000) notes or
   * `maxBufferedChars` (64 MB of encoded notes) waiting, each batch
   * tried `tries` times (5) while the database fails before it is dropped.
   */
  readonly historyWriter?: HistoryWriterTuning;
}

export interface ResolvedPostgresOptions {
  readonly connectionString: string | undefined;
  readonly pool: PostgresPool | undefined;
  readonly schema: string;
  readonly leaseMs: number;
  readonly poolSize: number;
  readonly statementTimeoutMs: number;
  readonly connectionTimeoutMs: number;
  readonly maxQueued: number;
  readonly consumer: boolean;
  readonly logger: Logger | undefined;
  readonly depthRefreshMs: number;
  readonly sweepIntervalMs: number;
  readonly probeIntervalMs: number;
  readonly preparedStatements: boolean;
  readonly historyWriter: HistoryWriterTuning | undefined;
}

export const DEFAULT_POSTGRES_SCHEMA = "webhook_tasks";

const DEFAULTS = {
  schema: DEFAULT_POSTGRES_SCHEMA,
  leaseMs: 30_000,
  poolSize: 10,
  statementTimeoutMs: 5_000,
  connectionTimeoutMs: 3_000,
  maxQueued: 10_000_000,
  depthRefreshMs: 2_000,
  sweepIntervalMs: 60_000,
  probeIntervalMs: 1_000,
} as const;

/** Lower-case letters, digits and _, as unquoted SQL names are: no quoting surprises, fits a channel name. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function isPostgresUrl(spec: unknown): spec is PostgresUrl {
  return typeof spec === "string" && /^postgres(?:ql)?:\/\//.test(spec);
}

/**
 * The store options a URL gives: the connection string, and the schema when the URL names one
 * in its query (`?schema=name`, taken out before the URL reaches the driver).
 */
export function postgresOptionsFromUrl(url: PostgresUrl): { connectionString: string; schema?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidUrl("PostgreSQL URL", url);
  }
  if (credentialsMisread(url)) throw invalidUrl("PostgreSQL URL", url);
  const schema = parsed.searchParams.get("schema");
  if (schema === null) return { connectionString: url };
  parsed.searchParams.delete("schema");
  return { connectionString: parsed.toString(), schema };
}

/**
 * What the store would refuse in a URL (unreadable, or a `?schema=` it does not take), without
 * showing the password; undefined when nothing. For the YAML file's `app.store`, checked with
 * its line before anything opens.
 */
export function postgresUrlProblem(url: PostgresUrl): string | undefined {
  let schema: string | undefined;
  try {
    ({ schema } = postgresOptionsFromUrl(url));
  } catch (error) {
    return (error as Error).message;
  }
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) return `its ?schema= must be 1-63 lower-case letters, digits or _, not starting with a digit, got ${JSON.stringify(schema)}`;
  return undefined;
}

/** The URL without its password, for logs and `check` output. */
export function redactPostgresUrl(url: string): string {
  // Where the password ends is unknown: any part of the URL may hold some of it.
  if (!URL.canParse(url) || credentialsMisread(url)) return `${/^[a-z]+:\/\//i.exec(url)?.[0] ?? ""}*** (not a valid URL)`;
  const parts = /^(postgres(?:ql)?:\/\/)([^/?#]*)([\s\S]*)$/.exec(url);
  if (parts === null) return url;
  const [, scheme, authority, rest] = parts;
  // A "#", "?" or "/" left unencoded in a password ends the authority before its "@" (and a
  // password of digits up to there reads as a port): hide all from the first ":" to the last "@".
  const lastAt = rest.lastIndexOf("@");
  if (!authority.includes("@") && lastAt >= 0) {
    const user = (authority + rest.slice(0, lastAt)).split(":")[0];
    if (user.length < authority.length + lastAt) return scheme + `${user}:***` + redactQueryPasswords(rest.slice(lastAt));
  }
  // As the driver reads it: the user part ends at the last "@" (a password may hold "@").
  const at = authority.lastIndexOf("@");
  const colon = at < 0 ? -1 : authority.indexOf(":");
  const shown = colon >= 0 && colon < at ? `${authority.slice(0, colon)}:***${authority.slice(at)}` : authority;
  // The driver also takes a password from the query (?password=, ?sslpassword=).
  return scheme + shown + redactQueryPasswords(rest);
}

function redactQueryPasswords(text: string): string {
  return text.replace(/([?&](?:ssl)?password=)[^&#]*/gi, "$1***");
}

export function resolvePostgresOptions(options: PostgresStoreOptions): ResolvedPostgresOptions {
  const where = "PostgresStore";
  if (typeof options !== "object" || options === null) throw new TypeError(`${where}: options must be an object`);
  const { connectionString, pool } = options;
  if ((connectionString === undefined) === (pool === undefined)) throw new TypeError(`${where}: give either connectionString or pool`);
  if (connectionString !== undefined && !isPostgresUrl(connectionString)) {
    throw new TypeError(`${where}: connectionString must start with postgres:// or postgresql://`);
  }
  // The driver would fail each connection with it, which looks like a database that is down.
  if (connectionString !== undefined && (!URL.canParse(connectionString) || credentialsMisread(connectionString))) throw invalidUrl(`${where}: connectionString`, connectionString);
  const schema = options.schema ?? DEFAULTS.schema;
  if (typeof schema !== "string" || !SCHEMA_NAME.test(schema)) {
    throw new TypeError(`${where}: schema must be 1-63 lower-case letters, digits or _, not starting with a digit, got ${JSON.stringify(schema)}`);
  }
  const preparedStatements = options.preparedStatements ?? true;
  if (typeof preparedStatements !== "boolean") throw new TypeError(`${where}: preparedStatements must be true or false`);
  const positive = (name: keyof typeof DEFAULTS & keyof PostgresStoreOptions, min = 1): number => {
    const value = options[name] ?? DEFAULTS[name];
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) throw new TypeError(`${where}: ${name} must be an integer of ${min} or more`);
    return value;
  };
  return {
    connectionString,
    pool,
    schema,
    leaseMs: positive("leaseMs", 100),
    poolSize: positive("poolSize", 2),
    statementTimeoutMs: positive("statementTimeoutMs"),
    connectionTimeoutMs: positive("connectionTimeoutMs"),
    maxQueued: positive("maxQueued"),
    consumer: options.consumer ?? true,
    logger: options.logger,
    depthRefreshMs: positive("depthRefreshMs"),
    sweepIntervalMs: positive("sweepIntervalMs"),
    probeIntervalMs: positive("probeIntervalMs"),
    preparedStatements,
    historyWriter: historyWriterTuning(options.historyWriter),
  };
}

function historyWriterTuning(tuning: HistoryWriterTuning | undefined): HistoryWriterTuning | undefined {
  if (tuning === undefined) return undefined;
  if (typeof tuning !== "object" || tuning === null) throw new TypeError("PostgresStore: historyWriter must be an object");
  for (const [key, value] of Object.entries(tuning)) {
    if (!["delayMs", "maxBatchNotes", "maxBatchChars", "maxBuffered", "maxBufferedChars", "tries", "retryMs"].includes(key)) throw new TypeError(`PostgresStore: historyWriter has no option "${key}"`);
    const min = key === "delayMs" || key === "retryMs" ? 0 : 1;
    if (typeof value !== "number" || !Number.isInteger(value) || value < min) throw new TypeError(`PostgresStore: historyWriter.${key} must be an integer of ${min} or more`);
  }
  return tuning;
}

/**
 * An unreadable URL is not shown: where it breaks is unknown, so any part of it may be the
 * password. Only a bad port is named, with its host, when both come after an "@" (past any
 * password).
 */
function invalidUrl(what: string, url: string): TypeError {
  const port = badPort(url);
  if (port !== undefined) return new TypeError(`${what} is not a valid URL: the port of ${port.host} is ${port.port}, not a number from 0 to 65535; the rest is not shown, since it may hold the password`);
  return new TypeError(`${what} is not a valid URL (characters such as @ / # ? in the user or password must be percent-encoded: %40 %2F %23 %3F; a port is a number from 0 to 65535); it is not shown, since it may hold the password`);
}

/**
 * The host and port after the last "@" of a URL whose port is out of range ("host:99999"), if that
 * is what is wrong. Only the part before any ? or #: an "@" in the query may be inside its
 * `?password=`, and one after an unencoded # or ? of the password leaves no host to trust.
 */
function badPort(url: string): { host: string; port: string } | undefined {
  const head = url.split(/[?#]/)[0];
  const at = head.lastIndexOf("@");
  if (at < 0) return undefined;
  const host = head.slice(at + 1).split("/")[0];
  const match = /^(\[[^\]]*\]|[^:[\]]+):(\d+)$/.exec(host);
  return match !== null && Number(match[2]) > 65535 ? { host: match[1], port: match[2] } : undefined;
}
