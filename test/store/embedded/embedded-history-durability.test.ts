import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { EmbeddedStore } from "../../../src/store/embedded/embedded-store";
import type { EventNote } from "../../../src/store/history";
import type { Logger } from "../../../src/util/logger";
import { until } from "../../helpers/wait";
import { StoreFixture } from "./store-fixture";

const STORE_MODULE = resolve(__dirname, "../../../src/store/embedded/embedded-store.js");

function note(id: string, receivedAt: number, n: number): EventNote {
  const raw = Buffer.from(JSON.stringify({ n, repository: { full_name: "octo/repo" } }));
  return {
    id,
    origin: { kind: "webhook", source: "hooks" },
    receivedAt,
    deliveries: [{ task: "t", queue: "webhook:t", messageId: id }],
    payload: { body: JSON.parse(raw.toString()), headers: { "content-type": "application/json" }, method: "POST", path: "/hooks" },
    raw,
  };
}

/** A logger that keeps what it is given. */
function keepingLogger(lines: Array<{ level: string; fields: unknown; message?: string }>): Logger {
  const at =
    (level: string) =>
    (fields: object | string, message?: string): void => {
      lines.push(typeof fields === "string" ? { level, fields: {}, message: fields } : { level, fields, message });
    };
  const logger: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => logger };
  return logger;
}

/**
 * A child process that plays an app: enqueues each event and, once its write resolved, notes it
 * in the history (as the app does). It prints "flushed <n>" after flushing the first `flushed`
 * events, then goes on enqueuing and noting (printing each acknowledged id) until killed.
 */
function appChild(dir: string, flushed: number): ChildProcess {
  const script = `
    const { EmbeddedStore } = require(${JSON.stringify(STORE_MODULE)});
    (async () => {
      const store = new EmbeddedStore({ dir: ${JSON.stringify(dir)} });
      await store.open();
      let i = 0;
      const one = async () => {
        const id = "e" + String(i).padStart(6, "0");
        const n = i++;
        const raw = Buffer.from(JSON.stringify({ n }));
        await store.enqueue("webhook:t", { id, payload: { body: { n }, headers: { "content-type": "application/json" } }, raw, attempts: 0, enqueuedAt: Date.now() });
        store.history.noteEvent({ id, origin: { kind: "webhook", source: "hooks" }, receivedAt: Date.now(), deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: { n }, headers: { "content-type": "application/json" } }, raw });
        process.stdout.write("acked " + id + "\\n");
      };
      while (i < ${flushed}) await one();
      await store.history.flush();
      process.stdout.write("flushed ${flushed}\\n");
      for (;;) await one();
    })().catch((e) => { console.error(e); process.exit(1); });
  `;
  return spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "pipe"] });
}

function linesOf(child: ChildProcess, onLine: (line: string) => void): Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }> {
  let buffered = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf("\n")) !== -1) {
      onLine(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  });
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, err })));
}

describe("EmbeddedStore history: durability, failures, readers", function () {
  this.timeout(60_000);
  const fixture = new StoreFixture("wt-history-dur-");
  afterEach(() => fixture.cleanup());

  it("keeps what was flushed, and every acknowledged event in its queue, after a SIGKILL", async () => {
    const dir = fixture.tempDir();
    const child = appChild(dir, 300);
    const acked: string[] = [];
    let flushedAt = -1;
    let killedAfter = 0;
    const ended = linesOf(child, (line) => {
      if (line.startsWith("acked ")) acked.push(line.slice(6));
      if (line.startsWith("flushed ")) flushedAt = acked.length;
      // Killed in the middle of the next notes: some written in a batch, some only in memory.
      if (flushedAt >= 0 && acked.length >= flushedAt + 150 && killedAfter === 0) {
        killedAfter = acked.length;
        child.kill("SIGKILL");
      }
    });
    const { signal, err } = await ended;
    expect(signal, err).to.equal("SIGKILL");
    expect(flushedAt).to.equal(300);

    const store = await fixture.openStore({ dir });
    // Every acknowledged event is in its queue (or was, had a task taken it): none lost.
    const queued = new Set((await store.claim("webhook:t", 100_000)).map((m) => m.id));
    for (const id of acked) expect(queued.has(id), id).to.equal(true);
    // Every event flushed before the kill is in the history, with its body.
    const { events } = await store.history.size();
    expect(events).to.be.at.least(300);
    for (const id of acked.slice(0, 300)) {
      const event = await store.history.get(id);
      expect(event, id).to.not.equal(undefined);
      expect((event!.payload as { body: { n: number } }).body.n).to.equal(Number(id.slice(1)));
    }
    // What the history has is what the queue had: a note follows its write, never precedes it.
    let cursor: string | undefined;
    do {
      const page = await store.history.list({ limit: 500, cursor });
      for (const e of page.events) expect(queued.has(e.id), e.id).to.equal(true);
      cursor = page.next;
    } while (cursor !== undefined);
    // At most the last batch interval's notes are lost (documented): here, at most the unflushed tail.
    expect(events).to.be.at.most(acked.length + 1);
  });

  it("reads as a store that does not consume, and makes no history where there is none", async () => {
    const dir = fixture.tempDir();
    const app = await fixture.openStore({ dir });
    await app.enqueue("webhook:t", { id: "x", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    await fixture.closeStore(app);
    // (One process opens one store on a directory: the reader comes after the app closed here, and beside it in the next test.)
    const reader = await fixture.openStore({ dir, consumer: false });
    expect((await reader.history.list({})).events).to.deep.equal([]);
    expect(await reader.history.get("x")).to.equal(undefined);
    expect(await reader.history.size()).to.deep.equal({ events: 0, bytes: 0 });
    expect(await reader.history.activity(0, 60_000)).to.deep.equal([]);
    expect(existsSync(join(dir, "history"))).to.equal(false);
  });

  it("reads the history from another process while the app writes it", async () => {
    const dir = fixture.tempDir();
    const child = appChild(dir, 100);
    let flushed = false;
    const ended = linesOf(child, (line) => {
      if (line.startsWith("flushed")) flushed = true;
    });
    try {
      while (!flushed) await new Promise((r) => setTimeout(r, 20));
      const reader = await fixture.openStore({ dir, consumer: false });
      const first = await reader.history.list({ limit: 500 });
      expect(first.events.length).to.be.at.least(100);
      // The app's later batches (one a second) show up while it runs.
      await until(async () => (await reader.history.size()).events > first.events.length);
      expect(await reader.history.get("e000042")).to.not.equal(undefined);
    } finally {
      child.kill("SIGKILL");
      await ended;
    }
  });

  it("logs a history that cannot be written (throttled), keeps the queues working, and catches up once it can", async () => {
    const dir = fixture.tempDir();
    const lines: Array<{ level: string; fields: unknown; message?: string }> = [];
    // A file where the history's directory goes: every batch fails.
    writeFileSync(join(dir, "history"), "in the way");
    const store = await fixture.openStore({ dir, logger: keepingLogger(lines), historyWrites: { intervalMs: 10 } });
    const t0 = Date.now();
    for (let i = 0; i < 30; i++) {
      await store.enqueue("webhook:t", { id: `f${i}`, payload: { n: i }, attempts: 0, enqueuedAt: t0 });
      store.history.noteEvent(note(`f${i}`, t0 + i, i));
      await new Promise((r) => setTimeout(r, 15));
    }
    await store.history.flush();
    expect(await store.depth("webhook:t")).to.equal(30);
    const errors = lines.filter((l) => l.level === "error" && /event history/.test(l.message ?? ""));
    expect(errors.length, JSON.stringify(lines)).to.be.within(1, 2);
    expect(await store.history.size()).to.deep.equal({ events: 0, bytes: 0 });
    rmSync(join(dir, "history"));
    store.history.noteEvent(note("after", t0 + 100, 100));
    await store.history.flush();
    expect(await store.history.get("after")).to.not.equal(undefined);
  });

  it("writes notes in batches behind the caller: noting returns before anything is written", async () => {
    const dir = fixture.tempDir();
    const store = await fixture.openStore({ dir, historyWrites: { intervalMs: 60_000 } });
    store.history.noteEvent(note("later", Date.now(), 1));
    // No timer fired, no flush: nothing written yet, and no history created on the request path.
    expect(existsSync(join(dir, "history"))).to.equal(false);
    await store.history.flush();
    expect(await store.history.get("later")).to.not.equal(undefined);
  });

  it("writes what is pending when the store closes, and keeps pauses and history across a reopen", async () => {
    const dir = fixture.tempDir();
    const store = await fixture.openStore({ dir, historyWrites: { intervalMs: 60_000 } });
    store.history.noteEvent(note("at-close", Date.now(), 1));
    await store.pauses.setPaused("t", true);
    await fixture.closeStore(store);
    const again = await fixture.openStore({ dir });
    expect(await again.history.get("at-close")).to.not.equal(undefined);
    expect([...(await again.pauses.paused())]).to.deep.equal(["t"]);
  });

  it("tells watchers of a pause another process wrote to the directory", async () => {
    const dir = fixture.tempDir();
    const app = await fixture.openStore({ dir });
    let calls = 0;
    const stop = app.pauses.watch(() => calls++);
    try {
      // The CLI's way: a store that does not consume, in a process of its own.
      const script = `
        const { EmbeddedStore } = require(${JSON.stringify(STORE_MODULE)});
        (async () => {
          const store = new EmbeddedStore({ dir: ${JSON.stringify(dir)}, consumer: false });
          await store.open();
          await store.pauses.setPaused("t", true);
          await store.close();
        })().catch((e) => { console.error(e); process.exit(1); });
      `;
      const { code, err } = await linesOf(spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "pipe"] }), () => undefined);
      expect(code, err).to.equal(0);
      const deadline = Date.now() + 5_000;
      while (calls === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(calls).to.be.at.least(1);
      expect([...(await app.pauses.paused())]).to.deep.equal(["t"]);
    } finally {
      stop();
    }
  });

  it("refuses a pause of a task without a name", async () => {
    const dir = fixture.tempDir();
    const store = await fixture.openStore({ dir });
    let error: unknown;
    try {
      await store.pauses.setPaused("", true);
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(TypeError);
    expect([...(await store.pauses.paused())]).to.deep.equal([]);
  });
});
