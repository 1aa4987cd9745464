import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** Bytes a directory tree occupies on disk (allocated blocks, as `du` counts them). */
export function diskUsage(dir: string): number {
  let total = 0;
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return 0;
  }
  for (const name of entries) {
    const path = join(dir, name);
    const stat = lstatSync(path);
    total += stat.isDirectory() ? diskUsage(path) : stat.blocks * 512;
  }
  return total;
}
