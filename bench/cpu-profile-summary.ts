import { readFileSync } from "node:fs";

/**
 * Reads a V8 .cpuprofile (written by `node --cpu-prof`) and tells where the time went: self
 * time per function, inclusive time per function, and self time per area (our src/, Node's
 * internals, Express, the garbage collector, idle).
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface FunctionTime {
  name: string;
  where: string;
  selfMs: number;
  selfShare: number;
  totalMs: number;
  totalShare: number;
}

export interface ProfileSummary {
  /** Sampled time, idle and start-up excluded. */
  busyMs: number;
  /** Samples spent loading modules (start-up), left out of every share. */
  startupMs: number;
  idleShare: number;
  areas: { area: string; selfMs: number; share: number }[];
  topSelf: FunctionTime[];
  /** Functions of our src/ by inclusive time (what a request costs inside each layer). */
  topOwnTotal: FunctionTime[];
}

export function areaOf(url: string, name: string): string {
  if (url === "") {
    if (name === "(garbage collector)") return "garbage collector";
    if (name === "(idle)") return "idle";
    if (name === "(program)") return "V8/native (program)";
    return "native";
  }
  if (url.includes("/dist/src/")) return "webhook-tasks (dist/src)";
  if (url.includes("/dist/bench/")) return "bench harness";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `package ${pkg[1]}`;
  if (url.startsWith("node:")) {
    const m = /^node:(?:internal\/)?([^/]+)/.exec(url);
    return `node:${m?.[1] ?? url}`;
  }
  return url;
}

function shortWhere(url: string, line: number): string {
  const trimmed = url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, "$1/");
  return `${trimmed}:${line + 1}`;
}

export function summarizeProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  }
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const key = (n: ProfileNode) => `${n.callFrame.functionName || "(anonymous)"}\u0000${n.callFrame.url}\u0000${n.callFrame.lineNumber}`;
  const selfBy = new Map<string, number>();
  const totalBy = new Map<string, number>();
  const areas = new Map<string, number>();
  // Start-up (module loading) is not the hot path: samples with a module loader frame on
  // their stack are counted apart.
  const startupNode = new Map<number, boolean>();
  const isStartup = (id: number): boolean => {
    const known = startupNode.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id)!;
    const p = parent.get(id);
    const value = n.callFrame.url.startsWith("node:internal/modules/") || (p !== undefined && isStartup(p));
    startupNode.set(id, value);
    return value;
  };
  let idle = 0;
  let all = 0;
  let startup = 0;
  for (const [id, ms] of self) {
    const n = byId.get(id)!;
    if (isStartup(id)) {
      startup += ms;
      continue;
    }
    all += ms;
    const area = areaOf(n.callFrame.url, n.callFrame.functionName);
    if (area === "idle") {
      idle += ms;
      continue;
    }
    areas.set(area, (areas.get(area) ?? 0) + ms);
    selfBy.set(key(n), (selfBy.get(key(n)) ?? 0) + ms);
    // inclusive: credit every distinct function on the stack once
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const k = key(byId.get(cur)!);
      if (seen.has(k)) continue;
      seen.add(k);
      totalBy.set(k, (totalBy.get(k) ?? 0) + ms);
    }
  }
  const busy = all - idle;
  const entry = (k: string): FunctionTime => {
    const [name, url, line] = k.split("\u0000") as [string, string, string];
    const s = selfBy.get(k) ?? 0;
    const t = totalBy.get(k) ?? 0;
    return { name, where: url ? shortWhere(url, Number(line)) : "(native)", selfMs: s, selfShare: s / busy, totalMs: t, totalShare: t / busy };
  };
  return {
    busyMs: busy,
    startupMs: startup,
    idleShare: all === 0 ? 0 : idle / all,
    areas: [...areas].map(([area, ms]) => ({ area, selfMs: ms, share: ms / busy })).sort((a, b) => b.selfMs - a.selfMs),
    topSelf: [...selfBy.keys()].map(entry).sort((a, b) => b.selfMs - a.selfMs).slice(0, top),
    topOwnTotal: [...totalBy.keys()].filter((k) => k.includes("/dist/src/")).map(entry).sort((a, b) => b.totalMs - a.totalMs).slice(0, top),
  };
}
