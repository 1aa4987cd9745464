import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChild, type ChildApp } from "./child-app";
import { until } from "../helpers/wait";

const FIXTURE = join(__dirname, "fixtures", "group-crash-app.js");

interface Run {
  readonly task: string;
  readonly key?: string;
  readonly newest?: number;
  readonly started?: boolean;
  readonly ns: number[];
}

/** The runs logged: those that finished, or (`started`) those that began. */
function runs(file: string, started = false): Run[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Run)
    .filter((run) => (run.started === true) === started);
}

async function post(url: string, body: unknown): Promise<number> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return res.status;
}

describe("debounce and batch across a SIGKILL (embedded store, child process)", function () {
  this.timeout(60_000);
  let dir: string;
  let running: ChildApp | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "group-crash-"))));
  afterEach(async () => {
    await running?.kill();
    running = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("a debounce and a batch collecting when the process is killed run after the restart, with every event", async () => {
    const log = join(dir, "runs.log");
    const env = { DATA_DIR: join(dir, "data"), LOG_FILE: log, GROUP_WAIT_MS: "3000" };
    running = await startChild(FIXTURE, env);
    for (const key of ["a", "b", "c"]) for (let n = 0; n < 10; n++) expect(await post(`${running.base}/in`, { kind: "debounce", key, n })).to.equal(202);
    for (let n = 0; n < 25; n++) expect(await post(`${running.base}/in`, { kind: "batch", key: "x", n })).to.equal(202);
    // Killed while every group still collects (3 s after its events): nothing has run.
    await running.kill("SIGKILL");
    expect(runs(log)).to.deep.equal([]);
    running = await startChild(FIXTURE, env);
    await until(() => runs(log).length === 4, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const all = runs(log);
    expect(all).to.have.length(4);
    for (const key of ["a", "b", "c"]) {
      const run = all.find((r) => r.task === "debounced" && r.key === key)!;
      expect(run.newest).to.equal(9);
      expect(run.ns).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
    const batch = all.find((r) => r.task === "batched")!;
    expect(batch.ns).to.deep.equal(Array.from({ length: 25 }, (_, n) => n));
  });

  it("groups whose runs were cut short by the kill run again after the restart, whole", async () => {
    const log = join(dir, "runs.log");
    const env = { DATA_DIR: join(dir, "data"), LOG_FILE: log, GROUP_WAIT_MS: "200" };
    running = await startChild(FIXTURE, { ...env, RUN_MS: "30000" });
    for (let n = 0; n < 8; n++) expect(await post(`${running.base}/in`, { kind: "debounce", key: "k", n })).to.equal(202);
    for (let n = 0; n < 6; n++) expect(await post(`${running.base}/in`, { kind: "batch", key: "x", n })).to.equal(202);
    await until(() => runs(log, true).length === 2, 10_000);
    await running.kill("SIGKILL");
    expect(runs(log)).to.deep.equal([]);
    running = await startChild(FIXTURE, { ...env, RUN_MS: "0" });
    await until(() => runs(log).length === 2, 15_000);
    const all = runs(log);
    expect(all.find((r) => r.task === "debounced")!.ns).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(all.find((r) => r.task === "batched")!.ns).to.deep.equal([0, 1, 2, 3, 4, 5]);
  });
});

