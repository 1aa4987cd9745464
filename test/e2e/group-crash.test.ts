import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChild, type ChildApp } from "./child-app";
import { until } from "../helpers/wait";

const FIXTURE = join(__dirname, "fixtures", "group-crash-app.js");
/** The groups' wait when the kill must come while they collect: many times what sending takes, even on a busy machine. */
const COLLECT_MS = 6_000;
/** The groups' wait when a burst must be one group: many times what sending it takes. */
const GROUP_MS = 1_000;

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
    const env = { DATA_DIR: join(dir, "data"), LOG_FILE: log, GROUP_WAIT_MS: String(COLLECT_MS) };
    running = await startChild(FIXTURE, env);
    const firstSent = Date.now();
    for (const key of ["a", "b", "c"]) for (let n = 0; n < 10; n++) expect(await post(`${running.base}/in`, { kind: "debounce", key, n })).to.equal(202);
    for (let n = 0; n < 25; n++) expect(await post(`${running.base}/in`, { kind: "batch", key: "x", n })).to.equal(202);
    // Killed while every group still collects: nothing has run. That needs the 55 requests and
    // the kill to take less than the groups' wait; a machine too slow for that says so here.
    await running.kill("SIGKILL");
    expect(Date.now() - firstSent, "ms from the first request to the kill").to.be.below(COLLECT_MS);
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
    const env = { DATA_DIR: join(dir, "data"), LOG_FILE: log, GROUP_WAIT_MS: String(GROUP_MS) };
    running = await startChild(FIXTURE, { ...env, RUN_MS: "30000" });
    const firstSent = Date.now();
    for (let n = 0; n < 8; n++) expect(await post(`${running.base}/in`, { kind: "debounce", key: "k", n })).to.equal(202);
    for (let n = 0; n < 6; n++) expect(await post(`${running.base}/in`, { kind: "batch", key: "x", n })).to.equal(202);
    // One burst and one batch only if all 14 requests fit in the groups' wait (else the groups
    // split); a machine too slow for that says so here.
    expect(Date.now() - firstSent, "ms to send the events").to.be.below(GROUP_MS);
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

