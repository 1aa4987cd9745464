import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { CONSUMER_UNKNOWN, STORE_EMPTY, statusTable } from "../../src/cli/status-command";
import { statusReport } from "../../src/cli/status-report";
import { MemoryStore } from "../../src/index";
import { FIXTURES } from "../config/yaml-helpers";
import { RunningCli, runCli } from "./cli-process";

describe("CLI: status", () => {
  it("prints per queue depth, waiting, in flight, oldest age, dead letters, consumer and producers", async () => {
    const store = new MemoryStore();
    await store.open();
    const old = Date.now() - 90_000;
    for (const id of ["a", "b", "c"]) await store.enqueue("webhook:in", { id, payload: {}, attempts: 0, enqueuedAt: id === "c" ? Date.now() : old });
    const [claimed] = await store.claim("webhook:in", 1);
    await store.deadLetter({ queue: "webhook:in", task: "receive", message: claimed, error: "x", attempts: 1, diedAt: Date.now() });
    await store.claim("webhook:in", 1);
    const tasks = [
      { name: "receive", queue: "webhook:in", emit: "out" },
      { name: "send", queue: "out", emit: undefined },
    ];
    // A queue no task names any more (a renamed task), with a dead letter left in it.
    await store.enqueue("webhook:old", { id: "old", payload: {}, attempts: 0, enqueuedAt: old });
    const [orphan] = await store.claim("webhook:old", 1);
    await store.deadLetter({ queue: "webhook:old", task: "old", message: orphan, error: "x", attempts: 1, diedAt: Date.now() });
    const status = await statusReport("demo", tasks, store, "memory");
    expect(status.queues[0]).to.deep.include({ queue: "webhook:in", depth: 2, waiting: 1, inFlight: 1, deadLetters: 1, consumer: "receive" });
    expect(status.queues[1]).to.deep.include({ queue: "out", depth: 0, oldestAgeSeconds: 0, consumer: "send", producers: ["receive"] });
    expect(status.queues[2]).to.deep.include({ queue: "webhook:old", depth: 0, deadLetters: 1, consumer: null, producers: [] });
    const lines = statusTable(status);
    expect(lines[0]).to.match(/^QUEUE\s+DEPTH\s+WAITING\s+IN FLIGHT\s+OLDEST\s+DEAD LETTERS\s+CONSUMER\s+PRODUCERS$/);
    expect(lines[1]).to.match(/^webhook:in\s+2\s+1\s+1\s+\d+\.\ds\s+1\s+receive\s+-$/);
    expect(lines[2]).to.match(/^out\s+0\s+0\s+0\s+-\s+0\s+send\s+receive$/);
    expect(lines[3]).to.match(/^webhook:old\s+0\s+0\s+0\s+-\s+1\s+-\s+-$/);
    const unknown = statusTable(await statusReport(undefined, undefined, store, "memory"));
    expect(unknown.slice(1, 3).map((l) => l.split(/\s{2,}/)[0])).to.deep.equal(["webhook:in", "webhook:old"]);
    expect(unknown[1]).to.match(/\s1\s+\?\s+\?$/);
    expect(unknown.at(-1)).to.equal(CONSUMER_UNKNOWN);
    await store.close();
  });

  it("names the paused tasks under the table and in the JSON, so that a growing queue is explained", async () => {
    const store = new MemoryStore();
    await store.open();
    const tasks = [{ name: "send", queue: "out", emit: undefined }];
    await store.enqueue("out", { id: "a", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    const running = await statusReport("demo", tasks, store, "memory");
    expect(running.paused).to.deep.equal([]);
    expect(statusTable(running).join("\n")).not.to.contain("paused");
    await store.pauses!.setPaused("send", true);
    const paused = await statusReport("demo", tasks, store, "memory");
    expect(paused.paused).to.deep.equal(["send"]);
    expect(statusTable(paused).at(-1)).to.equal("paused: send (events are stored, none runs until resumed: app.resume(task) or the console)");
    // With --store (no app read), the pause is the store's: still named.
    expect((await statusReport(undefined, undefined, store, "memory")).paused).to.deep.equal(["send"]);
    await store.close();
  });

  it("with --store, an idle store whose queues are all empty says that no queue holds anything, not that there are no queues", async () => {
    const store = new MemoryStore();
    await store.open();
    await store.enqueue("webhook:in", { id: "a", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    const [message] = await store.claim("webhook:in", 1);
    await store.complete("webhook:in", message.id);
    const idle = await statusReport(undefined, undefined, store, "/srv/data");
    expect(idle.queues).to.deep.equal([]);
    expect(statusTable(idle)).to.deep.equal([`${STORE_EMPTY} (/srv/data)`]);
    expect(STORE_EMPTY).to.equal("no queue holds a message or a dead letter: the store lists only those; give the app (worker.yaml or --module) to see its empty queues too");
    // With the app, its queues are listed, empty or not.
    const known = await statusReport("demo", [{ name: "receive", queue: "webhook:in", emit: undefined }], store, "/srv/data");
    expect(statusTable(known)[1]).to.match(/^webhook:in\s+0\s+0\s+0\s+-\s+0\s+receive\s+-$/);
    await store.close();
  });

  it("counts a debounced or batched task's waiting messages as collecting, in a column of its own", async () => {
    const store = new MemoryStore();
    await store.open();
    for (const id of ["a", "b", "c"]) await store.enqueue("webhook:grouped", { id, payload: {}, attempts: 0, enqueuedAt: Date.now(), groupKey: "" });
    await store.enqueue("plain", { id: "p", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    const tasks = [
      { name: "grouped", queue: "webhook:grouped", emit: undefined, grouped: true },
      { name: "plain", queue: "plain", emit: undefined },
    ];
    const status = await statusReport("demo", tasks, store, "memory");
    expect(status.queues[0]).to.deep.include({ queue: "webhook:grouped", waiting: 3, collecting: 3 });
    expect(status.queues[1]).to.deep.include({ queue: "plain", waiting: 1, collecting: 0 });
    const lines = statusTable(status);
    expect(lines[0]).to.match(/^QUEUE\s+DEPTH\s+WAITING\s+IN FLIGHT\s+OLDEST\s+DEAD LETTERS\s+COLLECTING\s+CONSUMER\s+PRODUCERS$/);
    expect(lines[1]).to.match(/^webhook:grouped\s+3\s+3\s+0\s+\S+\s+0\s+3\s+grouped\s+-$/);
    await store.close();
  });

  describe("as a command", () => {
    let dataDir: string;
    beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), "webhook-tasks-status-"))));
    afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

    it("opens the store of a YAML app that ran and prints its queues, as a table or JSON", async () => {
      const FAILING = join(FIXTURES, "failing.yaml");
      const env = { DATA_DIR: join(dataDir, "store"), OUT_FILE: join(dataDir, "out.jsonl") };
      const cli = new RunningCli([FAILING], env);
      try {
        const urls = await cli.urls(1);
        expect((await fetch(urls.get("always-fails")!, { method: "POST", body: "{}" })).status).to.equal(202);
        await cli.waitForLog((l) => String(l.msg).includes("dead letter"));
      } finally {
        expect(await cli.stop("SIGTERM")).to.equal(0);
      }
      const table = await runCli(["status", FAILING], env);
      expect(table.code, table.stderr).to.equal(0);
      const lines = table.stdout.trim().split("\n");
      expect(lines).to.have.length(2);
      expect(lines[1]).to.match(/^webhook:always-fails\s+0\s+0\s+0\s+-\s+1\s+always-fails\s+-$/);
      const json = await runCli(["status", "--json", FAILING], env);
      const parsed = JSON.parse(json.stdout) as { app: string; queues: Array<Record<string, unknown>> };
      expect(parsed.app).to.equal("failing-worker");
      expect(parsed.queues[0]).to.deep.include({ queue: "webhook:always-fails", depth: 0, deadLetters: 1 });
      const usage = await runCli(["status"], env);
      expect(usage.code).to.equal(2);
      const memory = await runCli(["status", join(FIXTURES, "worker.yaml")]);
      expect(memory.code).to.equal(1);
      expect(memory.stderr.trim()).to.match(/^error: app "yaml-worker" uses the memory store: its queues live only inside the running process/);
    });
  });
});
