import { spawn } from "node:child_process";
import { once } from "node:events";
import { expect } from "chai";
import { CLI } from "./cli-process";

/** Runs the CLI with its stdout read end closed at once, as `webhook-tasks ... | head -1` ends up. */
async function runWithClosedStdout(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.destroy(); // the reader is gone before the CLI writes: its writes get EPIPE
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stderr };
}

describe("CLI: a reader that stops reading (| head)", () => {
  // `events show <id> | head` printed Node's "Unhandled 'error' event ... EPIPE" stack and exited 1.
  it("--help into a closed pipe exits 0 with nothing on stderr", async () => {
    const result = await runWithClosedStdout(["--help"]);
    expect(result.stderr).to.equal("");
    expect(result.code).to.equal(0);
  });

  it("a usage error into a closed stdout still reports on stderr and exits 2", async () => {
    const result = await runWithClosedStdout(["sned"]);
    expect(result.stderr).to.match(/^error: unknown command "sned" \(did you mean "send"\?\)/);
    expect(result.code).to.equal(2);
  });
});
