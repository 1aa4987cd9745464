import { closeSync, fstatSync, openSync, statSync } from "node:fs";
import { join } from "node:path";

/** The data directory (or a file in it) was deleted or replaced while the store had it open. */
export class DataDirLostError extends Error {
  constructor(readonly dir: string, readonly reason: string) {
    super(`the data directory ${dir} is gone: ${reason}`);
    this.name = "DataDirLostError";
  }
}

const DATA_FILE = "data.mdb";

interface Watched {
  readonly path: string;
  readonly fd: number;
}

/**
 * Notices when the store's directory is deleted or swapped for another while the store runs.
 * Writes to files that were deleted succeed (the process still holds them) and vanish with the
 * process, so nothing reports it by itself. The guard holds a descriptor on the directory and
 * on its key files: a held inode cannot be freed and handed to a new file, so comparing it
 * with what the path names now is exact. A deleted file or directory has no links left.
 */
export class DataDirGuard {
  private readonly watched: Watched[] = [];

  /** Opens the directory and those of `files` (names in it) that exist. */
  constructor(private readonly dir: string, files: readonly string[]) {
    try {
      this.watch(dir);
      for (const name of files) this.watch(join(dir, name), true);
    } catch (error) {
      this.close();
      throw error;
    }
  }

  /** Why the directory is not the one opened any more, or undefined while it is. */
  check(): DataDirLostError | undefined {
    for (const { path, fd } of this.watched) {
      let held;
      try {
        held = fstatSync(fd);
      } catch {
        return this.lost(`${path} cannot be checked`);
      }
      if (held.nlink === 0) return this.lost(`${path} was deleted`);
      let now;
      try {
        now = statSync(path);
      } catch {
        return this.lost(`${path} was deleted`);
      }
      if (now.ino !== held.ino || now.dev !== held.dev) return this.lost(`${path} was replaced`);
    }
    return undefined;
  }

  /** One fstat, cheap enough after each commit: whether data.mdb was deleted. */
  dataFileDeleted(): DataDirLostError | undefined {
    const data = this.watched.find((watched) => watched.path.endsWith(DATA_FILE));
    if (!data) return undefined;
    try {
      if (fstatSync(data.fd).nlink > 0) return undefined;
    } catch {
      return this.lost(`${data.path} cannot be checked`);
    }
    return this.lost(`${data.path} was deleted`);
  }

  close(): void {
    for (const { fd } of this.watched.splice(0)) {
      try {
        closeSync(fd);
      } catch {
        // nothing left to release
      }
    }
  }

  private watch(path: string, optional = false): void {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (error) {
      if (optional && (error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    this.watched.push({ path, fd });
  }

  private lost(reason: string): DataDirLostError {
    return new DataDirLostError(this.dir, reason);
  }
}
