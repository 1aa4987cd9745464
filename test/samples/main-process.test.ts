import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";

const MAIN = join(__dirname, "../../samples/main.js");

/** Runs `npm start`'s program until its start-up log shows the orders endpoint line, then stops it. */
async function startupLines(env: Record<string, string>): Promise<Array<Record<string, unknown>>> {
  const dataDir = mkdtempSync(join(tmpdir(), "samples-main-"));
  const child = spawn(process.execPath, [MAIN], { env: { ...process.env, PORT: "0", CONSOLE_PORT: "0", WEBHOOK_TASKS_DATA_DIR: dataDir, WEBHOOK_TASKS_LOG_LEVEL: "info", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  const lines = () => stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
  try {
    const deadline = Date.now() + 10_000;
    while (!lines().some((l) => l.msg === "started") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    await new Promise((r) => setTimeout(r, 100));
    return lines();
  } finally {
    child.kill("SIGTERM");
    await once(child, "close");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe("samples: the start-up log of npm start", () => {
  it("prints the orders endpoint's URL and development token", async () => {
    const lines = await startupLines({});
    const line = lines.find((l) => l.msg === "orders endpoint needs this header");
    expect(line, JSON.stringify(lines)).to.not.equal(undefined);
    expect(line!.header).to.equal("authorization: Bearer dev-orders-token");
    expect(String(line!.url)).to.match(/^http:\/\/127\.0\.0\.1:\d+\/hooks\/orders$/);
  });

  it("serves the web console on 127.0.0.1 and prints its address", async () => {
    const lines = await startupLines({});
    const line = lines.find((l) => l.msg === "console ready");
    expect(line, JSON.stringify(lines)).to.not.equal(undefined);
    // CONSOLE_PORT=0 here: two samples (or a test beside a running `npm start`) never clash on 9400.
    expect(String(line!.url)).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(String(line!.url)).not.to.contain(":9400/");
  });

  it("never prints a token that came from the environment", async () => {
    const lines = await startupLines({ ORDERS_TOKEN: "real-secret-token" });
    expect(lines.some((l) => l.msg === "started")).to.equal(true);
    expect(JSON.stringify(lines)).not.to.contain("real-secret-token");
  });

  it("names the variables it runs on development values for", async () => {
    const lines = await startupLines({ ORDERS_TOKEN: "real-secret-token" });
    const line = lines.find((l) => l.msg === "unset, so development values are in use");
    expect(line, JSON.stringify(lines)).to.not.equal(undefined);
    expect(line!.variables).to.deep.equal(["SIGNING_SECRET"]);
  });

  it("with NODE_ENV=production, refuses to start on a development value", async () => {
    const { ORDERS_TOKEN: _o, SIGNING_SECRET: _s, ...env } = process.env;
    // A data directory of its own: the checkout's .data/samples is the README's.
    const dataDir = mkdtempSync(join(tmpdir(), "samples-main-"));
    try {
      const child = spawn(process.execPath, [MAIN], { env: { ...env, NODE_ENV: "production", PORT: "0", CONSOLE_PORT: "0", WEBHOOK_TASKS_DATA_DIR: dataDir, SIGNING_SECRET: "real-signing-secret" }, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const [code] = (await once(child, "close")) as [number];
      expect(code).to.equal(1);
      expect(stderr.trim()).to.equal("cannot start: ORDERS_TOKEN is not set (development values are refused when NODE_ENV=production)");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("with NODE_ENV=production, names every unset secret in one line, with no stack trace", async () => {
    const { ORDERS_TOKEN: _o, SIGNING_SECRET: _s, ...env } = process.env;
    const dataDir = mkdtempSync(join(tmpdir(), "samples-main-"));
    try {
      const child = spawn(process.execPath, [MAIN], { env: { ...env, NODE_ENV: "production", PORT: "0", CONSOLE_PORT: "0", WEBHOOK_TASKS_DATA_DIR: dataDir }, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const [code] = (await once(child, "close")) as [number];
      expect(code).to.equal(1);
      expect(stderr.trim()).to.match(/^cannot start: (ORDERS_TOKEN, SIGNING_SECRET|SIGNING_SECRET, ORDERS_TOKEN) are not set \(development values are refused when NODE_ENV=production\)$/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses them too when NODE_ENV says production another way (Production, PRODUCTION, prod)", async () => {
    const { ORDERS_TOKEN: _o, SIGNING_SECRET: _s, ...env } = process.env;
    const dataDir = mkdtempSync(join(tmpdir(), "samples-main-"));
    try {
      for (const nodeEnv of ["Production", "PRODUCTION", "prod", " production"]) {
        const child = spawn(process.execPath, [MAIN], { env: { ...env, NODE_ENV: nodeEnv, PORT: "0", CONSOLE_PORT: "0", WEBHOOK_TASKS_DATA_DIR: dataDir, SIGNING_SECRET: "real-signing-secret" }, stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
        // Refused, it exits at once; started, it runs until stopped.
        const stop = setTimeout(() => child.kill("SIGKILL"), 8_000);
        const [code] = (await once(child, "close")) as [number | null];
        clearTimeout(stop);
        if (code === null) throw new Error(`NODE_ENV=${JSON.stringify(nodeEnv)}: the sample started on a development secret`);
        expect(code, nodeEnv).to.equal(1);
        expect(stderr, nodeEnv).to.contain("ORDERS_TOKEN is not set");
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
