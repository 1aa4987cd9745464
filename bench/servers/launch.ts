import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { pinnedNode, SERVER_CORE } from "../pinning";
import type { ServerKind } from "./catalog";
import { BenchDatabase } from "./postgres-database";
import type { HistoryLine, ReadyLine, ServerConfig } from "./server-config";

/** A server child running on the server core, ready for traffic. */
export interface RunningServer {
  kind: ServerKind;
  pid: number;
  /** Every process of the server (several app processes share a port in some kinds). */
  pids: number[];
  /** The PostgreSQL schema of a server on the PostgreSQL store. */
  database?: BenchDatabase;
  port: number;
  paths: string[];
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
  /**
   * A framework server with the event history on (one process): the events its history holds
   * and their bytes, asked now (SIGUSR2); undefined for any other server, or without an answer.
   */
  historySize(timeoutMs?: number): Promise<HistoryLine | undefined>;
}

/** Extra node flags for server children, e.g. BENCH_SERVER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=prof". */
function nodeFlags(): string[] {
  return (process.env.BENCH_SERVER_NODE_FLAGS ?? "").split(/\s+/).filter(Boolean);
}

export async function launch(kind: ServerKind, caseConfig: ServerConfig, options: { nodeFlags?: string[]; timeoutMs?: number } = {}): Promise<RunningServer> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const config: ServerConfig = { ...caseConfig, ...kind.config };
  const database = config.store === "postgres" ? new BenchDatabase(kind.id, kind.keepTables) : undefined;
  if (database !== undefined) {
    config.postgresUrl = database.url;
    config.postgresSchema = database.schema;
  }
  const flags = [...nodeFlags(), ...(options.nodeFlags ?? [])];
  const { command, args } = pinnedNode(SERVER_CORE, [...flags, kind.script, JSON.stringify(config)]);
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NODE_ENV: "production" } });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  let historyWaiter: ((line: HistoryLine) => void) | undefined;

  const ready = await new Promise<ReadyLine>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind.id} not ready after ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    lines.on("line", (line) => {
      if (line.startsWith("HISTORY ")) historyWaiter?.(JSON.parse(line.slice(8)) as HistoryLine);
      if (!line.startsWith("READY ")) return;
      clearTimeout(timer);
      resolve(JSON.parse(line.slice(6)) as ReadyLine);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${kind.id} exited before ready (code ${code}, signal ${signal})\n${stderr}`));
    });
  }).catch(async (error: unknown) => {
    child.kill("SIGKILL");
    await database?.drop().catch(() => undefined);
    throw error;
  });

  return {
    kind,
    pid: ready.pid,
    pids: ready.pids ?? [ready.pid],
    database,
    port: ready.port,
    paths: config.paths,
    stop: async (graceMs = 15_000) => {
      await stopChild(child, exited, graceMs);
      await database?.drop();
    },
    historySize: async (timeoutMs = 30_000) => {
      const answers = kind.script.endsWith("framework.js") && config.history !== false && (config.processes ?? 1) === 1;
      if (!answers || child.exitCode !== null) return undefined;
      const line = new Promise<HistoryLine | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(undefined), timeoutMs);
        historyWaiter = (size) => {
          clearTimeout(timer);
          resolve(size);
        };
      });
      child.kill("SIGUSR2");
      const size = await line;
      historyWaiter = undefined;
      return size;
    },
  };
}

async function stopChild(child: ChildProcess, exited: Promise<void>, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}
