import { readFileSync, realpathSync } from "node:fs";
import { availableParallelism, cpus, release, totalmem } from "node:os";
import { canPin } from "./pinning";

/** The machine a run was taken on, printed with every result. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  autocannon: string;
  pinned: boolean;
  /** Filesystem of the durable store's directory (device and type), to show it is a real disk. */
  dataDisk: string;
}

export function describeMachine(dataDir: string): MachineInfo {
  return {
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: `Linux ${release()}`,
    node: process.version,
    autocannon: packageVersion("autocannon"),
    pinned: canPin(),
    dataDisk: filesystemOf(dataDir),
  };
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

/** "/dev/vda ext4" for the mount holding `dir` (longest mount point that prefixes it). */
function filesystemOf(dir: string): string {
  try {
    let path: string;
    try {
      path = realpathSync(dir);
    } catch {
      path = dir;
    }
    let best = { mount: "", text: "unknown" };
    for (const line of readFileSync("/proc/mounts", "utf8").split("\n")) {
      const [device, mount, type] = line.split(" ");
      if (!device || !mount || !type) continue;
      const prefix = mount.endsWith("/") ? mount : `${mount}/`;
      if ((path === mount || path.startsWith(prefix) || mount === "/") && mount.length >= best.mount.length) {
        best = { mount, text: `${device} ${type}` };
      }
    }
    return best.text;
  } catch {
    return "unknown";
  }
}
