import { readdirSync, readFileSync } from "node:fs";

/** Microseconds in a clock tick of /proc's CPU times (USER_HZ is 100 on Linux). */
export const TICK_US = 10_000;

/** Clock ticks of CPU of this process's main thread and of its other threads (Linux). */
export function threadTicks(): { main: number; other: number } {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (Number(tid) === process.pid) main += ticks;
    else other += ticks;
  }
  return { main, other };
}
