import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { LoadJob, LoadResult } from "./load-job";
import { LOAD_CORE, pinnedNode } from "./pinning";

/**
 * The harness side of the load generator: one long-lived child on the load core (so that it
 * never shares a core with a server), driven over IPC.
 */
export class LoadGenerator {
  private readonly child: ChildProcess;
  private pending: { resolve: (r: LoadResult) => void; reject: (e: Error) => void } | undefined;

  constructor() {
    const { command, args } = pinnedNode(LOAD_CORE, [join(__dirname, "load-child.js")]);
    this.child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.child.on("message", (reply: { ok: boolean; result?: LoadResult; error?: string }) => {
      const pending = this.pending;
      this.pending = undefined;
      if (pending === undefined) return;
      // NaN crosses IPC as null (JSON): a run without a 2xx answer has no latency figures.
      if (reply.ok) pending.resolve(Object.fromEntries(Object.entries(reply.result!).map(([k, v]) => [k, v === null ? NaN : v])) as unknown as LoadResult);
      else pending.reject(new Error(`load generator failed: ${reply.error}`));
    });
    this.child.on("exit", (code, signal) => {
      this.pending?.reject(new Error(`load generator exited (code ${code}, signal ${signal})`));
      this.pending = undefined;
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  run(job: LoadJob): Promise<LoadResult> {
    if (this.pending !== undefined) return Promise.reject(new Error("the load generator runs one job at a time"));
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.send(job);
    });
  }

  close(): void {
    if (this.child.connected) this.child.disconnect();
  }
}
