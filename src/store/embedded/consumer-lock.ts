import { randomBytes } from "node:crypto";
import { existsSync, linkSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Thrown when another live process, or another open store of this one, consumes the data directory. */
export class DataDirInUseError extends Error {
  constructor(dir: string, pid: number) {
    const who = pid === process.pid ? `another store of this process (an app not stopped yet?)` : `process ${pid}`;
    super(`data directory ${dir} is in use by ${who}: one process consumes a data directory at a time (claims live in its memory)`);
    this.name = "DataDirInUseError";
  }
}

/**
 * The locks this process holds, by the lock file's real path: the file names a process, not a
 * store, so a second store of this process on the directory would take it for its own.
 */
const heldHere = new Set<string>();

/**
 * Marks a data directory as consumed by this process, so that a second app instance (an
 * overlapping deploy, say) refuses to start instead of running the same events twice. The
 * file holds the pid and, on Linux, the process's start time, so a pid reused by another
 * program after a crash is recognised as stale. Readers (the CLI) take no lock.
 */
export class ConsumerLock {
  private readonly path: string;
  private held = false;
  /** The key in heldHere while held. */
  private heldAs: string | undefined;

  constructor(dir: string) {
    this.path = join(dir, "consumer.lock");
  }

  /**
   * Takes the lock; throws DataDirInUseError when a live process holds it. Safe against other
   * processes taking it at the same moment: the file appears whole (written aside, then linked:
   * an empty file seen half-written was once taken for stale), and a stale one is removed only
   * under a second lock file, `consumer.lock.takeover`, so that no racer deletes the lock another
   * has just taken.
   */
  acquire(dir: string): void {
    // Two stores of one process would claim the same messages, and one's close would drop the lock the other holds.
    const key = join(realpathSync(dir), "consumer.lock");
    if (heldHere.has(key)) throw new DataDirInUseError(dir, process.pid);
    const mine = JSON.stringify({ pid: process.pid, started: startTime(process.pid) });
    const deadline = Date.now() + TAKEOVER_WAIT_MS;
    while (Date.now() < deadline) {
      if (createWhole(this.path, mine)) {
        this.held = true;
        this.heldAs = key;
        heldHere.add(key);
        return;
      }
      const seen = readText(this.path);
      if (seen === undefined) continue; // gone meanwhile: try again
      const holder = parseHolder(seen);
      if (holder !== undefined && holder.pid !== process.pid && isAlive(holder)) throw new DataDirInUseError(dir, holder.pid);
      // Stale (its process is gone) or ours from before: take it over.
      this.removeIfStill(seen, mine);
    }
    throw new Error(`cannot take ${this.path}: another process keeps recreating it`);
  }

  /**
   * Removes the lock if it still holds `seen`, under the takeover lock: only its holder removes
   * a lock, and a lock is created only where none is, so the file read is the file removed.
   */
  private removeIfStill(seen: string, mine: string): void {
    const takeover = `${this.path}.takeover`;
    if (!createWhole(takeover, mine)) {
      // Another process is taking it over; or one died doing so (a moment's window), and its file goes.
      const other = readText(takeover);
      const holder = other === undefined ? undefined : parseHolder(other);
      if (holder !== undefined && isAlive(holder)) sleepSync(2);
      else if (other !== undefined) unlinkQuietly(takeover);
      return;
    }
    try {
      if (readText(this.path) === seen) unlinkQuietly(this.path);
    } finally {
      unlinkQuietly(takeover);
    }
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    if (this.heldAs !== undefined) heldHere.delete(this.heldAs);
    this.heldAs = undefined;
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

/** Longest `acquire` waits for other processes taking a stale lock over at the same moment. */
const TAKEOVER_WAIT_MS = 2_000;

/** Creates `path` holding `content`, whole (written aside, then linked); false when it exists. */
function createWhole(path: string, content: string): boolean {
  const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(aside, content, { flag: "wx" });
  try {
    linkSync(aside, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return false;
  } finally {
    unlinkSync(aside);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function readHolder(path: string): Holder | undefined {
  const text = readText(path);
  return text === undefined ? undefined : parseHolder(text);
}

/** The file's text; undefined when it is gone (another process removed it meanwhile). */
function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function parseHolder(text: string): Holder | undefined {
  try {
    const parsed = JSON.parse(text) as Holder;
    return Number.isInteger(parsed.pid) && parsed.pid > 0 ? parsed : undefined;
  } catch {
    return undefined; // unreadable (an empty file left by an older version's crash): treat as stale
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
