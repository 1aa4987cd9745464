import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of a test's own (initdb in a temp dir, a free port on 127.0.0.1, trust
 * auth, user `postgres`, database `postgres`), for tests that stop, restart or freeze a
 * server; the shared server is never touched. PostgreSQL refuses to run as root, so its tools
 * run as the `postgres` system user when the test runs as root.
 */
export interface ThrowawayPostgres {
  /** Data directory (inside `root`). */
  readonly dataDir: string;
  readonly port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  /** Starts (or restarts) the server; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server: "fast" disconnects clients and shuts down cleanly, "immediate" is a crash. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  /** Freezes every process of the server (SIGSTOP): connections stay open and nothing answers. */
  freeze(): void;
  /** Undoes `freeze`. */
  thaw(): void;
  /** Stops the server (if running) and deletes its files. */
  destroy(): Promise<void>;
}

export interface ThrowawayPostgresOptions {
  /** Extra server settings, passed as `-c name=value` (e.g. { fsync: "off" }). */
  readonly settings?: Readonly<Record<string, string>>;
  /** Where its temp dir is made (default the system's): a loop-mounted disk a test may fill. */
  readonly parentDir?: string;
}

/** Creates and starts a cluster. Takes a second or two (initdb). */
export async function startThrowawayPostgres(options: ThrowawayPostgresOptions = {}): Promise<ThrowawayPostgres> {
  const bindir = (await run("pg_config", ["--bindir"])).stdout.trim();
  const root = mkdtempSync(join(options.parentDir ?? tmpdir(), "throwaway-pg-"));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    chownSync(root, uid, gid);
  }
  const tool = (name: string, args: string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", join(bindir, name), ...args]) : run(join(bindir, name), args);
  const dataDir = join(root, "data");
  await tool("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"]);
  const port = await freePort();
  const settings: Record<string, string> = {
    listen_addresses: "127.0.0.1",
    port: String(port),
    unix_socket_directories: root,
    max_connections: "100",
    shared_buffers: "16MB",
    ...options.settings,
  };
  const serverOptions = Object.entries(settings)
    .map(([name, value]) => `-c ${name}=${value}`)
    .join(" ");
  let running = false;

  const cluster: ThrowawayPostgres = {
    dataDir,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await tool("pg_ctl", ["-D", dataDir, "-l", join(root, "server.log"), "-o", serverOptions, "-w", "-t", "30", "start"]);
      running = true;
    },
    async stop(mode = "fast") {
      if (!running) return;
      await tool("pg_ctl", ["-D", dataDir, "-m", mode, "-w", "-t", "30", "stop"]);
      running = false;
    },
    freeze() {
      for (const pid of clusterPids(dataDir)) signal(pid, "SIGSTOP");
    },
    thaw() {
      for (const pid of clusterPids(dataDir)) signal(pid, "SIGCONT");
    },
    async destroy() {
      if (running) {
        cluster.thaw();
        await cluster.stop("immediate").catch(() => undefined);
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`cannot start a throwaway PostgreSQL: ${serverLog(root) || (error instanceof Error ? error.message : String(error))}`);
  }
  return cluster;
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
  const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
  return { uid, gid };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The postmaster (first line of postmaster.pid) and its children, found through /proc. */
function clusterPids(dataDir: string): number[] {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return [];
  }
  const pids = [postmaster];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(join("/proc", entry, "stat"), "utf8");
      // Fields after the command name, which is in parentheses and may hold spaces.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === postmaster) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

function serverLog(root: string): string {
  try {
    return readFileSync(join(root, "server.log"), "utf8").trim().split("\n").slice(-5).join("\n");
  } catch {
    return "";
  }
}
