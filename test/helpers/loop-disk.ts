import { execFileSync } from "node:child_process";
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A small ext4 filesystem in a file, loop-mounted: a disk a test may fill. */
export interface LoopDisk {
  /** Where it is mounted. */
  readonly dir: string;
  unmount(): void;
}

/**
 * Makes and mounts an ext4 image of `mib` MiB (no blocks reserved for root, so root sees the
 * disk fill as anyone would). tmpfs would not do: it ignores fsync. Returns why not when this
 * machine cannot (not root, no loop device, no mkfs.ext4).
 */
export function mountLoopDisk(mib: number): LoopDisk | { readonly unavailable: string } {
  if (process.platform !== "linux") return { unavailable: "loop devices are a Linux feature" };
  if (process.getuid?.() !== 0) return { unavailable: "mounting a loop device needs root" };
  const base = mkdtempSync(join(tmpdir(), "loop-disk-"));
  const image = join(base, "disk.img");
  const dir = join(base, "mnt");
  mkdirSync(dir);
  try {
    writeFileSync(image, "");
    truncateSync(image, mib * 1024 * 1024);
    execFileSync("mkfs.ext4", ["-q", "-F", "-m", "0", image], { stdio: "pipe" });
    execFileSync("mount", ["-o", "loop", image, dir], { stdio: "pipe" });
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    return { unavailable: `cannot mount a loop device here: ${(error as Error).message.split("\n")[0]}` };
  }
  return {
    dir,
    unmount() {
      try {
        execFileSync("umount", [dir], { stdio: "pipe" });
      } catch {
        execFileSync("umount", ["-l", dir], { stdio: "pipe" }); // something still holds it: detach now, freed when let go
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Bytes free on the filesystem of `dir`. */
export function freeBytes(dir: string): number {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize;
}

/** Writes a file of zeros (synced) until only `leaveBytes` are free, or the disk is full. */
export function fillDisk(path: string, leaveBytes = 0): void {
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) {
      const room = freeBytes(join(path, "..")) - leaveBytes;
      if (room <= 0) break;
      try {
        writeSync(fd, chunk, 0, Math.min(chunk.length, room));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
        throw error;
      }
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
