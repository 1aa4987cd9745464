import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";

/** The compiled CLI, as `node_modules/.bin/webhook-tasks` runs it. */
export const CLI = join(__dirname, "../../src/cli/main.js");

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to completion. */
export async function runCli(args: readonly string[], env: Record<string, string | undefined> = {}, cwd?: string): Promise<CliResult> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"], cwd });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

/** A `webhook-tasks run` child: its log lines (JSON on stdout) as they come. */
export class RunningCli {
  readonly child: ChildProcess;
  stderr = "";
  stdout = "";
  private readonly exited: Promise<number | null>;

  constructor(args: readonly string[], env: Record<string, string | undefined> = {}, cwd?: string) {
    // The tests read the info-level "started" and "listening" lines, whatever the runner's environment says.
    const environment = { ...process.env, WEBHOOK_TASKS_LOG_LEVEL: "info", ...env };
    this.child = spawn(process.execPath, [CLI, "run", ...args], { env: environment, stdio: ["ignore", "pipe", "pipe"], cwd });
    this.child.stdout!.on("data", (c: Buffer) => (this.stdout += c.toString()));
    this.child.stderr!.on("data", (c: Buffer) => (this.stderr += c.toString()));
    this.exited = once(this.child, "close").then(([code]) => code as number | null);
  }

  /** Parsed JSON log lines so far. */
  get logs(): Array<Record<string, unknown>> {
    return this.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** Resolves with the first log line `match` accepts; rejects if the process exits first. */
  async waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs = 10_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logs.find(match);
      if (found) return found;
      if (this.child.exitCode !== null) throw new Error(`the CLI exited with ${this.child.exitCode}; stderr:\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`log line not seen in time; stderr:\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Webhook URLs by task name, from the "listening" lines `run` writes after start. */
  async urls(count: number): Promise<Map<string, string>> {
    await this.waitForLog(() => this.logs.filter((l) => l.msg === "listening").length >= count);
    return new Map(this.logs.filter((l) => l.msg === "listening").map((l) => [String(l.task), String(l.url)]));
  }

  exit(): Promise<number | null> {
    return this.exited;
  }

  /** Sends `signal` and waits for the exit code. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}
