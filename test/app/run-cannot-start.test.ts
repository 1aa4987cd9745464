import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { expect } from "chai";

const RUN_APP = join(__dirname, "fixtures/run-app.js");

/** Runs the fixture to its exit; resolves to its exit code and output. */
async function runApp(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [RUN_APP], { env: { ...process.env, WEBHOOK_TASKS_DEBUG: "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

describe("app.run() when the app cannot start", () => {
  it("a port another process holds: one line on stderr, exit code 1, no stack", async function () {
    this.timeout(20_000);
    // Another process, not this one, holds the port: as when a second copy of the app is started.
    const holder = spawn(process.execPath, ["-e", 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => console.log(s.address().port));'], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const [chunk] = (await once(holder.stdout, "data")) as [Buffer];
      const port = Number(chunk.toString().trim());
      expect(port).to.be.greaterThan(0);
      const result = await runApp({ PORT: String(port) });
      expect(result.code).to.equal(1);
      expect(result.stderr).to.equal(`cannot start: cannot listen on 127.0.0.1:${port}: the address is already in use (another process uses this port)\n`);
      expect(result.stdout).to.equal("");

      // With WEBHOOK_TASKS_DEBUG, the stack follows the line.
      const debug = await runApp({ PORT: String(port), WEBHOOK_TASKS_DEBUG: "1" });
      expect(debug.code).to.equal(1);
      expect(debug.stderr.split("\n")[0]).to.equal(`cannot start: cannot listen on 127.0.0.1:${port}: the address is already in use (another process uses this port)`);
      expect(debug.stderr).to.match(/^\s+at /m);
    } finally {
      holder.kill();
      await once(holder, "close");
    }
  });

  it("another listen failure gets the same one line, without the port hint", async () => {
    // 192.0.2.1 is reserved for documentation: no machine has it, so it cannot be bound.
    const result = await runApp({ HOST: "192.0.2.1", PORT: "0" });
    expect(result.code).to.equal(1);
    expect(result.stderr).to.equal("cannot start: cannot listen on 192.0.2.1:0: no such local address\n");
  });
});

describe("app.run() and a second signal", () => {
  for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
    it(`a second ${signal} during the graceful stop exits at once with ${code}, as a shell counts a process ${signal} ended`, async function () {
      this.timeout(20_000);
      // A long drain before the stop: only the second signal can end it soon.
      const child = spawn(process.execPath, [RUN_APP], { env: { ...process.env, PORT: "0", SHUTDOWN_DELAY_MS: "30000" }, stdio: ["ignore", "pipe", "inherit"] });
      await once(child.stdout, "data");
      child.kill(signal);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      child.kill(signal);
      const [exitCode] = (await once(child, "close")) as [number | null];
      expect(exitCode).to.equal(code);
      expect(Date.now() - started).to.be.lessThan(5_000);
    });
  }
});
