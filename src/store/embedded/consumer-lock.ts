import { closeSync, existsSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/** Thrown when another live process consumes the data directory. */
export class DataDirInUseError extends Error {
  constructor(dir: string, pid: number) {
    super(`data directory ${dir} is in use by process ${pid}: one process consumes a data directory at a time (claims live in its memory)`);
    this.name = "DataDirInUseError";
  }
}

/**
 * Marks a data directory as consumed by this process, so that a second app instance (an
 * overlapping deploy, say) refuses to start instead of running the same events twice. The
 * file holds the pid and, on Linux, the process's start time, so a pid reused by another
 * program after a crash is recognised as stale. Readers (the CLI) take no lock.
 */
export class ConsumerLock {
  private readonly path: string;
  private held = false;

  constructor(dir: string) {
    this.path = join(dir, "consumer.lock");
  }

  /** Takes the lock; throws DataDirInUseError when a live process holds it. */
  acquire(dir: string): void {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(this.path, "wx");
        try {
          writeSync(fd, JSON.stringify({ pid: process.pid, started: startTime(process.pid) }));
        } finally {
          closeSync(fd);
        }
        this.held = true;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const holder = readHolder(this.path);
      if (holder !== undefined && holder.pid !== process.pid && isAlive(holder)) throw new DataDirInUseError(dir, holder.pid);
      // Stale (its process is gone) or ours from before: take it over.
      unlinkSync(this.path);
    }
    throw new Error(`cannot take ${this.path}: another process keeps recreating it`);
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      const holder = readHolder(this.path);
      if (holder?.pid === process.pid) unlinkSync(this.path);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

interface Holder {
  pid: number;
  started?: string;
}

function readHolder(path: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8")) as Holder;
    return Number.isInteger(parsed.pid) && parsed.pid > 0 ? parsed : undefined;
  } catch {
    return undefined; // unreadable or half-written: treat as stale
  }
}

function isAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // Alive; but is it the same process, or a new one that got the pid?
  const now = startTime(holder.pid);
  return holder.started === undefined || now === undefined || now === holder.started;
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined off Linux. */
function startTime(pid: number): string | undefined {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return undefined;
  try {
    const text = readFileSync(stat, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count from the last ")".
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
