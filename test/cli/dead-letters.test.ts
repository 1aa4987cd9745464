import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { operate, parseDeadLetterArgs, type DeadLetterRequest } from "../../src/cli/dead-letters-command";
import type { Output } from "../../src/cli/output";
import { UsageError } from "../../src/cli/usage";
import { MemoryStore } from "../../src/index";
import { FIXTURES } from "../config/yaml-helpers";
import { RunningCli, runCli } from "./cli-process";

/** Captures what a command prints. */
function capture(): Output & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

async function storeWithDeadLetter(id = "evt-1"): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.open();
  await store.enqueue("webhook:orders", { id, payload: { body: { order: 7 } }, raw: Buffer.from('{"order":7}'), attempts: 0, enqueuedAt: Date.UTC(2026, 0, 1) });
  const [message] = await store.claim("webhook:orders", 1);
  await store.deadLetter({ queue: "webhook:orders", task: "orders", message, error: "boom: database down\nat line 2", attempts: 5, diedAt: Date.UTC(2026, 0, 2) });
  return store;
}

const request = (args: string[]): DeadLetterRequest => parseDeadLetterArgs(args);

describe("CLI: dead-letters arguments", () => {
  it("parses list, show, replay and purge with a YAML file or --module", () => {
    expect(request(["list", "w.yaml"])).to.deep.include({ action: "list", id: undefined, all: false, app: { yaml: "w.yaml" } });
    expect(request(["show", "abc", "w.yaml", "--json"])).to.deep.include({ action: "show", id: "abc", json: true });
    expect(request(["replay", "--all", "--module", "app.js"])).to.deep.include({ action: "replay", all: true, app: { module: "app.js" } });
    expect(request(["purge", "abc", "--module", "app.js"])).to.deep.include({ action: "purge", id: "abc", all: false });
    expect(request(["list", "--queue", "pushes", "w.yaml"])).to.deep.include({ queue: "pushes" });
    expect(request(["show", "abc", "--store", "postgres://db/h"])).to.deep.include({ action: "show", id: "abc", app: { store: "postgres://db/h" } });
    expect(request(["purge", "--all", "--store", ".data/app"])).to.deep.include({ all: true, app: { store: ".data/app" } });
  });

  it("refuses what it cannot understand with a UsageError", () => {
    for (const args of [[], ["peek", "w.yaml"], ["show", "w.yaml"], ["replay", "w.yaml"], ["list", "--all", "w.yaml"], ["list"], ["show", "a", "b", "w.yaml"], ["purge", "x", "--queue", "q", "w.yaml"], ["list", "--module", "a.js", "--store", "d"], ["list", "w.yaml", "--store", "d"], ["show", "--store", "d"]]) {
      expect(() => parseDeadLetterArgs(args), args.join(" ")).to.throw(UsageError);
    }
  });
});

describe("CLI: dead-letters on an open store", () => {
  it("lists dead letters as a table, or as JSON", async () => {
    const store = await storeWithDeadLetter();
    const table = capture();
    expect(await operate(store, request(["list", "w.yaml"]), table)).to.equal(0);
    expect(table.stdout[0]).to.match(/^ID\s+TASK\s+QUEUE\s+ATTEMPTS\s+DIED AT\s+ERROR$/);
    expect(table.stdout[1]).to.match(/^evt-1\s+orders\s+webhook:orders\s+5\s+2026-01-02T00:00:00Z\s+boom: database down$/);
    const json = capture();
    await operate(store, request(["list", "--json", "w.yaml"]), json);
    const [letter] = JSON.parse(json.stdout.join("\n")) as Array<Record<string, unknown>>;
    expect(letter).to.deep.include({ id: "evt-1", task: "orders", attempts: 5, rawBase64: Buffer.from('{"order":7}').toString("base64") });
    const empty = capture();
    await operate(store, request(["list", "--queue", "other", "w.yaml"]), empty);
    expect(empty.stdout).to.deep.equal(["no dead letters"]);
  });

  it("shows one dead letter with its error and event, and exits 1 for an unknown id", async () => {
    const store = await storeWithDeadLetter();
    const shown = capture();
    expect(await operate(store, request(["show", "evt-1", "w.yaml"]), shown)).to.equal(0);
    const text = shown.stdout.join("\n");
    expect(text).to.contain("error:       boom: database down").and.contain('"order": 7').and.contain("raw body:    11 bytes");
    const missing = capture();
    expect(await operate(store, request(["show", "nope", "w.yaml"]), missing)).to.equal(1);
    expect(missing.stderr).to.deep.equal(["error: no dead letter with id nope"]);
  });

  it("replays one dead letter back to its queue, attempts reset", async () => {
    const store = await storeWithDeadLetter();
    const out = capture();
    expect(await operate(store, request(["replay", "evt-1", "w.yaml"]), out)).to.equal(0);
    expect(out.stdout[0]).to.match(/^replayed 1 dead letter/);
    expect(await store.deadLetters.list()).to.have.length(0);
    const [message] = await store.claim("webhook:orders", 1);
    expect(message).to.include({ id: "evt-1", attempts: 0 });
    expect(await operate(store, request(["replay", "evt-1", "w.yaml"]), capture())).to.equal(1);
  });

  // A task renamed since (orders -> receive): the letter went back to webhook:orders, where
  // nothing reads it, and the command said "replayed 1 dead letter (their tasks handle them ...)".
  it("given the app, a letter whose queue none of its tasks reads stays a dead letter, said on stderr (exit 1)", async () => {
    const store = await storeWithDeadLetter();
    const renamed = [{ name: "receive", queue: "webhook:receive", emit: undefined }];
    const one = capture();
    expect(await operate(store, request(["replay", "evt-1", "w.yaml"]), one, renamed)).to.equal(1);
    expect(one.stdout).to.deep.equal([]);
    expect(one.stderr).to.deep.equal([
      'error: 1 dead letter of queue "webhook:orders" (task "orders") not replayed: no task of this app reads that queue (renamed or removed?), so it would wait there unseen; give a task the name "orders" again, or purge it',
    ]);
    const all = capture();
    expect(await operate(store, request(["replay", "--all", "w.yaml"]), all, renamed)).to.equal(1);
    expect(all.stdout).to.deep.equal(["replayed 0 dead letters"]);
    expect(await store.deadLetters.list()).to.have.length(1);
    expect(await store.depth("webhook:orders")).to.equal(0);
    // The app that still has the task replays it as before.
    expect(await operate(store, request(["replay", "--all", "w.yaml"]), capture(), [{ name: "orders", queue: "webhook:orders", emit: undefined }])).to.equal(0);
    expect(await store.deadLetters.list()).to.have.length(0);
  });

  it("replays and purges all, or one", async () => {
    const store = await storeWithDeadLetter("a");
    await store.enqueue("webhook:orders", { id: "b", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    const [b] = await store.claim("webhook:orders", 1);
    await store.deadLetter({ queue: "webhook:orders", task: "orders", message: b, error: "x", attempts: 1, diedAt: Date.now() });
    const purgeOne = capture();
    expect(await operate(store, request(["purge", "a", "w.yaml"]), purgeOne)).to.equal(0);
    expect(purgeOne.stdout).to.deep.equal(["purged 1 dead letter"]);
    expect(await operate(store, request(["purge", "a", "w.yaml"]), capture())).to.equal(1);
    const replayAll = capture();
    await operate(store, request(["replay", "--all", "--json", "w.yaml"]), replayAll);
    expect(JSON.parse(replayAll.stdout[0])).to.deep.equal({ replayed: 1 });
    const [again] = await store.claim("webhook:orders", 1);
    await store.deadLetter({ queue: "webhook:orders", task: "orders", message: again, error: "x", attempts: 1, diedAt: Date.now() });
    const purgeAll = capture();
    await operate(store, request(["purge", "--all", "w.yaml"]), purgeAll);
    expect(purgeAll.stdout).to.deep.equal(["purged 1 dead letter"]);
  });
});

describe("CLI: dead-letters as a command", () => {
  let dataDir: string;
  let outFile: string;
  const running: RunningCli[] = [];
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "webhook-tasks-dead-"));
    outFile = join(dataDir, "out.jsonl");
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((r) => r.stop("SIGKILL")));
    rmSync(dataDir, { recursive: true, force: true });
  });
  const FAILING = join(FIXTURES, "failing.yaml");
  const env = () => ({ DATA_DIR: join(dataDir, "store"), OUT_FILE: outFile });

  /** Runs the failing worker, sends one event, waits until it is a dead letter, stops the app. */
  async function makeDeadLetter(body: unknown): Promise<void> {
    const cli = new RunningCli([FAILING], env());
    running.push(cli);
    const urls = await cli.urls(1);
    const response = await fetch(urls.get("always-fails")!, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect(response.status).to.equal(202);
    await cli.waitForLog((l) => String(l.msg).includes("dead letter"));
    expect(await cli.stop("SIGTERM")).to.equal(0);
  }

  it("refuses an app whose store is memory: its dead letters live in the running process", async () => {
    const result = await runCli(["dead-letters", "list", join(FIXTURES, "worker.yaml")]);
    expect(result.code).to.equal(1);
    expect(result.stderr.trim()).to.match(/^error: app "yaml-worker" uses the memory store/);
  });

  it("lists, shows, replays (re-delivered to the fixed task) and purges the dead letters of a YAML app", async function () {
    this.timeout(90_000); // seven CLI commands and three app runs: about 6 s alone, several times that on a busy machine
    await makeDeadLetter({ order: 1 });

    const list = await runCli(["dead-letters", "list", FAILING], env());
    expect(list.code, list.stderr).to.equal(0);
    const lines = list.stdout.trim().split("\n");
    expect(lines).to.have.length(2);
    expect(lines[1]).to.match(/always-fails\s+webhook:always-fails\s+1\s+\S+\s+handler failed on purpose/);

    const json = await runCli(["dead-letters", "list", "--json", FAILING], env());
    const [letter] = JSON.parse(json.stdout) as Array<{ id: string }>;
    const shown = await runCli(["dead-letters", "show", letter.id, FAILING], env());
    expect(shown.code).to.equal(0);
    expect(shown.stdout).to.contain(`id:          ${letter.id}`).and.contain('"order": 1');

    const replay = await runCli(["dead-letters", "replay", letter.id, FAILING], env());
    expect(replay.code, replay.stderr).to.equal(0);
    expect(replay.stdout).to.match(/^replayed 1 dead letter/);
    expect((await runCli(["dead-letters", "list", FAILING], env())).stdout.trim()).to.equal("no dead letters");

    const fixed = new RunningCli([FAILING], { ...env(), FIXED: "1" });
    running.push(fixed);
    await fixed.urls(1);
    const deadline = Date.now() + 5000;
    while (!readOut(outFile).includes('"kind":"fixed"') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(readOut(outFile)).to.contain('{"kind":"fixed","value":{"order":1}}');
    expect(await fixed.stop("SIGTERM")).to.equal(0);

    await makeDeadLetter({ order: 2 });
    const purge = await runCli(["dead-letters", "purge", "--all", FAILING], env());
    expect(purge.stdout.trim()).to.equal("purged 1 dead letter");
    const unknown = await runCli(["dead-letters", "show", "no-such-id", FAILING], env());
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr.trim()).to.equal("error: no dead letter with id no-such-id");
  });

  it("refuses a data directory where the app never ran, instead of creating an empty store", async () => {
    const result = await runCli(["dead-letters", "list", FAILING], { DATA_DIR: join(dataDir, "never") });
    expect(result.code).to.equal(1);
    expect(result.stderr.trim()).to.match(/^error: app "failing-worker" has no store at .*never: it has not run/);
  });

  it("opens the store of a compiled @Module app with --module", async () => {
    const module = join(FIXTURES, "module-app.cjs");
    const memory = await runCli(["dead-letters", "list", "--module", module]);
    expect(memory.code).to.equal(1);
    expect(memory.stderr).to.match(/app "module-app" uses the memory store/);
    mkdirSync(join(dataDir, "module"));
    const embedded = await runCli(["dead-letters", "list", "--module", module], { MODULE_STORE: "embedded", DATA_DIR: join(dataDir, "module") });
    expect(embedded.code, embedded.stderr).to.equal(0);
    expect(embedded.stdout.trim()).to.equal("no dead letters");
    const notModule = await runCli(["dead-letters", "list", "--module", join(FIXTURES, "handlers.cjs")]);
    expect(notModule.code).to.equal(1);
    expect(notModule.stderr).to.match(/handlers.cjs exports no app \(found [^)]*failUnlessFixed[^)]*\): export a CoreApp instance/);
  });
});

function readOut(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
