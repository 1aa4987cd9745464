import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";

/** A child process running a fixture app, with the port it printed. */
export interface ChildApp {
  readonly child: ChildProcess;
  readonly port: number;
  readonly base: string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `node <script>` and resolves once it prints "LISTENING <port>". */
export async function startChild(script: string, env: Record<string, string>, timeoutMs = 15_000): Promise<ChildApp> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`child did not start in time; stderr: ${stderr}`)), timeoutMs);
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const match = /LISTENING (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  return {
    child,
    port,
    base: `http://127.0.0.1:${port}`,
    async kill(signal: NodeJS.Signals = "SIGKILL") {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await once(child, "exit")) as [number | null];
      return code;
    },
  };
}
