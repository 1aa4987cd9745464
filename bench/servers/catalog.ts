import { join } from "node:path";
import { MAIN_CASE } from "../cases";
import type { ServerConfig } from "./server-config";

/** One kind of server under test: which script, with which settings on top of the case's. */
export interface ServerKind {
  /** Stable id used in results and env filters. */
  id: string;
  /** Name shown in tables and the chart. */
  label: string;
  /** Compiled child entry. */
  script: string;
  /** Settings added to the case's (ack mode, store). */
  config: Partial<ServerConfig>;
  /** The baseline every ratio divides by. */
  baseline?: boolean;
  /** Runs only when named in BENCH_SERVERS (a comparison, not part of the default run). */
  optIn?: boolean;
  /**
   * PostgreSQL servers: tables of its schema kept between measurements (the others are emptied),
   * for job queues whose bookkeeping tables (migrations, queue definitions) must survive.
   */
  keepTables?: readonly string[];
  /** Runs only in these cases (a comparison that needs one case, not every shape); default all. */
  cases?: readonly string[];
}

export const BARE_NODE: ServerKind = {
  id: "bare-node",
  label: "bare node:http",
  script: join(__dirname, "bare-node.js"),
  config: {},
  baseline: true,
};

export const BARE_EXPRESS: ServerKind = {
  id: "bare-express",
  label: "Express 5 route",
  script: join(__dirname, "bare-express.js"),
  config: {},
};

export const FRAMEWORK_RECEIVED: ServerKind = {
  id: "framework-received",
  label: "webhook-tasks ack=received (memory store)",
  script: join(__dirname, "framework.js"),
  config: { ack: "received", store: "memory" },
};

/** The same as FRAMEWORK_RECEIVED with metrics, refusal logs and the tracing API (no SDK) on. */
export const FRAMEWORK_RECEIVED_OBSERVED: ServerKind = {
  id: "framework-received-observed",
  label: "webhook-tasks ack=received (memory store), metrics + logs + tracing API",
  script: join(__dirname, "framework.js"),
  config: { ack: "received", store: "memory", observe: true },
};

/** FRAMEWORK_RECEIVED without the event history (the memory store keeps one by default): its cost, side by side. Main case only, opt-in. */
export const FRAMEWORK_RECEIVED_NO_HISTORY: ServerKind = {
  id: "framework-received-no-history",
  label: "webhook-tasks ack=received (memory store), history off",
  script: join(__dirname, "framework.js"),
  config: { ack: "received", store: "memory", history: false },
  cases: [MAIN_CASE],
  optIn: true,
};

export const FRAMEWORK_PERSISTED: ServerKind = {
  id: "framework-persisted",
  label: "webhook-tasks ack=persisted (embedded store)",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "embedded" },
};

/** FRAMEWORK_PERSISTED without the event history (apps keep it by default): its cost, side by side. Main case only. */
export const FRAMEWORK_PERSISTED_NO_HISTORY: ServerKind = {
  id: "framework-persisted-no-history",
  label: "webhook-tasks ack=persisted (embedded store), history off",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "embedded", history: false },
  cases: [MAIN_CASE],
};

/** FRAMEWORK_PERSISTED with the history's batches of 200 ms (at most 1,000 notes) instead of the default second: what batch size does to its cost, side by side. Opt-in. */
export const FRAMEWORK_PERSISTED_HISTORY_200MS: ServerKind = {
  id: "framework-persisted-history-200ms",
  label: "webhook-tasks ack=persisted (embedded store), history in 200 ms batches",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "embedded", historyWrites: { intervalMs: 200, batchNotes: 1_000 } },
  cases: [MAIN_CASE],
  optIn: true,
};

/** The durable mode with the journal turned off: every message a B-tree insert and delete (the engine before the journal). */
export const FRAMEWORK_PERSISTED_BTREE: ServerKind = {
  id: "framework-persisted-btree",
  label: "webhook-tasks ack=persisted (embedded store, journal off)",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "embedded", journal: false },
};

/** ack=persisted on PostgreSQL: every event committed to the database before the 202. */
export const FRAMEWORK_POSTGRES: ServerKind = {
  id: "framework-postgres",
  label: "webhook-tasks ack=persisted (PostgreSQL)",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "postgres" },
};

/** FRAMEWORK_POSTGRES without the event history: its cost on PostgreSQL, side by side. Main case only. */
export const FRAMEWORK_POSTGRES_NO_HISTORY: ServerKind = {
  id: "framework-postgres-no-history",
  label: "webhook-tasks ack=persisted (PostgreSQL), history off",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "postgres", history: false },
  cases: [MAIN_CASE],
};

/** Two app processes (replicas) on one port and one PostgreSQL schema: their combined req/s. */
export const FRAMEWORK_POSTGRES_TWO: ServerKind = {
  id: "framework-postgres-x2",
  label: "webhook-tasks ack=persisted (PostgreSQL, 2 app processes)",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "postgres", processes: 2 },
};

/** framework-postgres without prepared statements (`preparedStatements: false`): what they save, side by side. */
export const FRAMEWORK_POSTGRES_UNPREPARED: ServerKind = {
  id: "framework-postgres-unprepared",
  label: "webhook-tasks ack=persisted (PostgreSQL, no prepared statements)",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "postgres", preparedStatements: false },
  optIn: true,
};

/** node:http + pg-boss on the same PostgreSQL: `send` per request, 202 after it resolves, a worker consuming. */
export const PGBOSS: ServerKind = {
  id: "pgboss",
  label: "node:http + pg-boss (PostgreSQL)",
  script: join(__dirname, "pgboss.js"),
  config: { store: "postgres" },
  optIn: true,
  keepTables: ["version", "queue", "schedule", "subscription"],
};

/** node:http + graphile-worker on the same PostgreSQL: `addJob` per request, 202 after it resolves, a runner consuming. */
export const GRAPHILE_WORKER: ServerKind = {
  id: "graphile-worker",
  label: "node:http + graphile-worker (PostgreSQL)",
  script: join(__dirname, "graphile-worker.js"),
  config: { store: "postgres" },
  optIn: true,
  keepTables: ["migrations", "_private_tasks", "_private_known_crontabs", "_private_job_queues"],
};

/**
 * Fan-out: three tasks with a filter on each source, each taking every event; compare with
 * framework-received and framework-persisted. In the emit case each of the three emits to the
 * one second queue, whose no-op task then runs three times per request.
 */
export const FRAMEWORK_RECEIVED_FANOUT: ServerKind = {
  id: "framework-received-fanout3",
  label: "webhook-tasks ack=received (memory store), 3 subscribers with filters",
  script: join(__dirname, "framework.js"),
  config: { ack: "received", store: "memory", subscribers: 3 },
  cases: [MAIN_CASE],
};

export const FRAMEWORK_PERSISTED_FANOUT: ServerKind = {
  id: "framework-persisted-fanout3",
  label: "webhook-tasks ack=persisted (embedded store), 3 subscribers with filters",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "embedded", subscribers: 3 },
  cases: [MAIN_CASE],
};

/** FRAMEWORK_PERSISTED with `concurrency: { limit: 4, key }` over 1,000 keys: what flow limits cost in-process. */
export const FRAMEWORK_PERSISTED_KEYED: ServerKind = {
  id: "framework-persisted-keyed",
  label: "webhook-tasks ack=persisted (embedded store), concurrency { limit: 4, key } over 1,000 keys",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "embedded", keyedLimit: 4, keys: 1_000 },
};

/** FRAMEWORK_POSTGRES with `concurrency: { limit: 4, key }` over 1,000 keys: claims counted in SQL under the queue's lock. */
export const FRAMEWORK_POSTGRES_KEYED: ServerKind = {
  id: "framework-postgres-keyed",
  label: "webhook-tasks ack=persisted (PostgreSQL), concurrency { limit: 4, key } over 1,000 keys",
  script: join(__dirname, "framework.js"),
  config: { ack: "persisted", store: "postgres", keyedLimit: 4, keys: 1_000 },
};

export const ALL_SERVERS: readonly ServerKind[] = [
  BARE_NODE,
  BARE_EXPRESS,
  FRAMEWORK_RECEIVED,
  FRAMEWORK_RECEIVED_OBSERVED,
  FRAMEWORK_RECEIVED_NO_HISTORY,
  FRAMEWORK_PERSISTED,
  FRAMEWORK_PERSISTED_NO_HISTORY,
  FRAMEWORK_PERSISTED_HISTORY_200MS,
  FRAMEWORK_PERSISTED_BTREE,
  FRAMEWORK_POSTGRES,
  FRAMEWORK_POSTGRES_NO_HISTORY,
  FRAMEWORK_POSTGRES_TWO,
  FRAMEWORK_PERSISTED_KEYED,
  FRAMEWORK_POSTGRES_KEYED,
  FRAMEWORK_POSTGRES_UNPREPARED,
  PGBOSS,
  GRAPHILE_WORKER,
  FRAMEWORK_RECEIVED_FANOUT,
  FRAMEWORK_PERSISTED_FANOUT,
];
