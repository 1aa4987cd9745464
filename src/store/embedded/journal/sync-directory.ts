import { closeSync, fsyncSync, openSync } from "node:fs";

/** fsync of a directory: makes a file created or deleted in it survive a crash. */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
