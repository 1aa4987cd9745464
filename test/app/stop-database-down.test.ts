import { spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { expect } from "chai";
import { CoreApp, PostgresStore, WebhookSource } from "../../src/index";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../helpers/throwaway-postgres";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

/**
 * stop() on PostgreSQL once the database went away with history notes still to write: the
 * notes' retries (seconds apart, on unref'd timers) must neither outlast the stop nor let the
 * process end before stop() resolves.
 */
describe("stop() with the database gone and history notes unwritten", function () {
  this.timeout(60_000);
  let cluster: ThrowawayPostgres;
  beforeEach(async () => {
    cluster = await startThrowawayPostgres();
  });
  afterEach(async () => {
    await cluster?.destroy();
  });


  it("resolves within its timeout and a try, logs \"stopped\"; the notes lost are counted", async () => {
    const lines: LogLine[] = [];
    const logger = recordingLogger(lines);
    const store = new PostgresStore({ connectionString: cluster.url, schema: "stop_down", logger, connectionTimeoutMs: 500, historyWriter: { delayMs: 60_000, tries: 5, retryMs: 2_000 } });
    const source = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("stop-down", { store, logger, history: true }).task({ source, name: "t" }, async () => undefined);
    await app.start();
    // The notes wait in the writer (a minute's batching) when the database stops.
    for (let i = 0; i < 3; i++) expect((await fetch(source.url, { method: "POST", body: "x" })).status).to.equal(202);
    await cluster.stop("immediate");
    const started = Date.now();
    await app.stop({ timeoutMs: 500 });
    // Without a bound: the writer's four pauses between five tries, 2 + 4 + 8 + 8 s.
    expect(Date.now() - started).to.be.below(5_000);
    expect(lines.some((l) => l.msg === "stopped")).to.equal(true);
    expect(store.history.writes.lost).to.be.above(0);
  });

  it("with the database frozen (answering nothing), resolves within its timeout and a second, saying what it abandoned", async () => {
    const lines: LogLine[] = [];
    const logger = recordingLogger(lines);
    const store = new PostgresStore({ connectionString: cluster.url, schema: "stop_frozen", logger, historyWriter: { delayMs: 60_000 } });
    const source = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 });
    let running = 0;
    const app = new CoreApp("stop-frozen", { store, logger, history: true }).task({ source, name: "t" }, async () => {
      running++;
      await new Promise((resolve) => setTimeout(resolve, 200));
    });
    await app.start();
    for (let i = 0; i < 3; i++) expect((await fetch(source.url, { method: "POST", body: "x" })).status).to.equal(202);
    // A run under way (its completion will meet the frozen server), notes waiting in the writer.
    await until(() => running > 0);
    cluster.freeze();
    const started = Date.now();
    await app.stop({ timeoutMs: 1_000 });
    // Without a bound: the statements' own timeouts (6 s) and the pool's end after them, 6 to 9 s.
    expect(Date.now() - started).to.be.below(1_000 + 1_000 + 500);
    expect(lines.some((l) => l.msg === "stopped")).to.equal(true);
    const abandoned = lines.find((l) => l.msg.startsWith("PostgreSQL did not answer as the store closed: its connections are cut"));
    expect(abandoned?.fields).to.include({ store: "postgres", waitingFor: "the history's last notes" });
    expect(abandoned?.fields?.connectionsCut).to.be.above(0);
    expect(store.history.writes.lost).to.be.above(0);
  });

  it("in a process with nothing else to do, stop() resolves before the process ends", async () => {
    const script = join(__dirname, "fixtures/stop-database-down-app.js");
    const child = spawn(process.execPath, [script, cluster.url], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = once(child, "exit");
    while (!out.includes("READY")) {
      if (child.exitCode !== null) throw new Error(`the child exited early: ${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await cluster.stop("immediate");
    child.stdin.write("go\n");
    const [code] = (await exited) as [number | null];
    expect(out).to.include("STOPPED");
    expect(code).to.equal(0);
  });

  it("in a process with nothing else to do and the database frozen, stop() resolves in time and the process ends right after", async () => {
    const script = join(__dirname, "fixtures/stop-database-down-app.js");
    const child = spawn(process.execPath, [script, cluster.url], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    let stoppedAt: number | undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (stoppedAt === undefined && out.includes("STOPPED")) stoppedAt = Date.now();
    });
    const exited = once(child, "exit");
    while (!out.includes("READY")) {
      if (child.exitCode !== null) throw new Error(`the child exited early: ${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    cluster.freeze();
    const asked = Date.now();
    child.stdin.write("go\n");
    const [code] = (await exited) as [number | null];
    expect(code).to.equal(0);
    expect(stoppedAt, "STOPPED printed").to.not.equal(undefined);
    // Its stop's timeout is 500 ms, and a second for the store.
    expect(stoppedAt! - asked).to.be.below(500 + 1_000 + 500);
    // Nothing left waiting on the frozen server holds the process up.
    expect(Date.now() - stoppedAt!).to.be.below(500);
  });
});
