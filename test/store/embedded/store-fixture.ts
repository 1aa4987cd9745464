import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddedStore, type EmbeddedStoreOptions } from "../../../src/store/embedded/embedded-store";

/** Temporary directories and the stores a test opened in them; `cleanup` (after each test) closes and removes them all. */
export class StoreFixture {
  private dirs: string[] = [];
  private stores: EmbeddedStore[] = [];

  constructor(private readonly prefix: string) {}

  tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), this.prefix));
    this.dirs.push(dir);
    return dir;
  }

  async openStore(options: EmbeddedStoreOptions): Promise<EmbeddedStore> {
    const store = new EmbeddedStore(options);
    await store.open();
    this.stores.push(store);
    return store;
  }

  async closeStore(store: EmbeddedStore): Promise<void> {
    this.stores = this.stores.filter((s) => s !== store);
    await store.close();
  }

  async cleanup(): Promise<void> {
    for (const store of this.stores.splice(0)) await store.close();
    this.removeDirs();
  }

  /** Only the directories (for stores the fixture did not open). */
  removeDirs(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a script in a child node; resolves to its stdout. */
export function runChild(script: string, env: Record<string, string>, killAfterMs?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      if (code === 0 || signal === "SIGKILL") resolve(out);
      else reject(new Error(`child exited with ${code ?? signal}: ${err}`));
    });
  });
}
