import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { expect } from "chai";
import { CoreApp, silentLogger, WebhookSource } from "../../src/index";

/** run()'s SIGINT and SIGTERM handlers in this process, beyond those it had before. */
function handlers(): { SIGINT: number; SIGTERM: number } {
  return { SIGINT: process.listenerCount("SIGINT"), SIGTERM: process.listenerCount("SIGTERM") };
}

function newApp(name: string): CoreApp {
  return new CoreApp(name, { store: "memory", logger: silentLogger }).task({ source: new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 }), name: "t" }, async () => undefined);
}

describe("app.run()'s signal handlers", () => {
  let before: { SIGINT: number; SIGTERM: number };
  beforeEach(() => (before = handlers()));

  it("are removed once the app stopped: a dozen apps run one after another in one process leave none behind, and no warning", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      // Past Node's default of 10 listeners per signal, had each app left its own.
      for (let i = 0; i < 12; i++) {
        const app = newApp(`run-${i}`);
        await app.run();
        expect(handlers()).to.deep.equal({ SIGINT: before.SIGINT + 1, SIGTERM: before.SIGTERM + 1 });
        await app.stop({ timeoutMs: 1_000 });
        expect(handlers()).to.deep.equal(before);
      }
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).to.deep.equal([]);
    } finally {
      process.removeListener("warning", onWarning);
    }
  });

  it("are added once by run() called twice, and removed by the stop", async () => {
    const app = newApp("run-twice");
    await app.run();
    await app.run();
    expect(handlers()).to.deep.equal({ SIGINT: before.SIGINT + 1, SIGTERM: before.SIGTERM + 1 });
    await app.stop();
    expect(handlers()).to.deep.equal(before);
  });

  it("are not left by an app stopped while run() waited for its start", async () => {
    const app = newApp("run-stopped-starting");
    const started = app.start();
    const running = app.run();
    const stopped = app.stop();
    await Promise.all([started, running, stopped]);
    expect(app.running).to.equal(false);
    expect(handlers()).to.deep.equal(before);
  });

  it("are not added for an app whose own start() failed: run() leaves that failure to its start() and resolves", async () => {
    const holder = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 });
    const first = new CoreApp("run-port-holder", { store: "memory", logger: silentLogger }).task({ source: holder, name: "t" }, async () => undefined);
    await first.start();
    try {
      const port = Number(new URL(holder.url).port);
      const second = new CoreApp("run-port-taken", { store: "memory", logger: silentLogger }).task({ source: new WebhookSource({ path: "/hook", host: "127.0.0.1", port }), name: "t" }, async () => undefined);
      const started = second.start();
      const running = second.run();
      const failure = await started.then(() => undefined, (e: unknown) => e as Error);
      expect(failure?.message).to.match(/cannot listen on 127\.0\.0\.1/);
      await running;
      expect(handlers()).to.deep.equal(before);
    } finally {
      await first.stop();
    }
  });

  it("are not added for an app stopped before run(): run() says it cannot start, on stderr, and exits 1", async function () {
    this.timeout(20_000);
    const child = spawn(process.execPath, [join(__dirname, "fixtures/run-stopped-app.js")], { env: { ...process.env, WEBHOOK_TASKS_DEBUG: "" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const [code] = (await once(child, "close")) as [number | null];
    expect(stderr).to.equal('cannot start: CoreApp "run-stopped" cannot start: it was stopped, and an app starts once; build a new app to start again\n');
    expect(stdout).to.equal("");
    expect(code).to.equal(1);
  });
});
