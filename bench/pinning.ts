import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

/** Core of the servers under test and core of the load generator. */
export const SERVER_CORE = 0;
export const LOAD_CORE = 1;

let cached: boolean | undefined;

/** True when `taskset` exists and the machine has at least two cores to split. */
export function canPin(): boolean {
  if (cached === undefined) {
    try {
      execFileSync("taskset", ["-c", "0", "true"], { stdio: "ignore" });
      cached = availableParallelism() >= 2;
    } catch {
      cached = false;
    }
  }
  return cached;
}

/** The command and arguments that run `node args...` on one core (or unpinned, without taskset). */
export function pinnedNode(core: number, args: readonly string[]): { command: string; args: string[] } {
  if (canPin()) return { command: "taskset", args: ["-c", String(core), process.execPath, ...args] };
  return { command: process.execPath, args: [...args] };
}
