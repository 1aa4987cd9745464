import { readdirSync, readFileSync, writeFileSync } from "node:fs";

/** Memory figures of one process, in bytes, from /proc/<pid>/status. */
export interface MemoryFigures {
  /** Resident set size now (VmRSS). */
  rss: number;
  /** Peak resident set size since start or since the last resetPeak (VmHWM). */
  peakRss: number;
  /** Of rss, private anonymous memory: the JS heap, buffers, native allocations (RssAnon). */
  rssAnon: number;
  /** Of rss, file pages mapped in: code, and the embedded store's memory-mapped data file, which the kernel can drop (RssFile). */
  rssFile: number;
}

function field(status: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status);
  return match ? Number(match[1]) * 1024 : NaN;
}

export function memoryOf(pid: number): MemoryFigures {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rss: field(status, "VmRSS"), peakRss: field(status, "VmHWM"), rssAnon: field(status, "RssAnon"), rssFile: field(status, "RssFile") };
}

/**
 * Resets VmHWM to the current RSS (Linux: write 5 to /proc/<pid>/clear_refs), so each round
 * reports its own peak. Returns false where the kernel or permissions do not allow it; the
 * peak is then the peak since the process started.
 */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** CPU time (user + system) used by a process so far, in seconds. */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[11] is utime, fields[12] stime (the 14th and 15th of the whole line), in clock ticks.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU time of several processes together, in seconds; a process gone meanwhile counts 0 (read it before it ends). */
export function cpuSecondsOfAll(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += cpuSecondsOf(pid);
    } catch {
      // ended: its time is lost, which can only lower the figure
    }
  }
  return total;
}

/**
 * CPU time, in seconds, that user processes spent on the machine so far: all cores' busy time
 * minus interrupts and soft interrupts (loopback TCP is handled there) and minus kernel
 * threads (disk writeback, journaling). Subtracting the processes under test leaves what other
 * programs used, without counting the disk work a durable store causes against it.
 */
export function userProcessSeconds(): number {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!;
  // user nice system idle iowait irq softirq steal
  const t = line.trim().split(/\s+/).slice(1).map(Number);
  const busy = t[0]! + t[1]! + t[2]!;
  return busy / 100 - kernelThreadSeconds();
}

/** CPU time of kernel threads (children of kthreadd, pid 2), in seconds. */
function kernelThreadSeconds(): number {
  let ticks = 0;
  for (const name of readdirSync("/proc")) {
    if (name.charCodeAt(0) > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[1] is ppid; kthreadd itself is pid 2
    if (fields[1] === "2" || name === "2") ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100;
}
