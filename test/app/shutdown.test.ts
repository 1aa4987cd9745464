import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { CoreApp, EmbeddedStore, MemoryStore, silentLogger, WebhookSource, type TaskContext } from "../../src/index";
import { gate, sleep } from "../helpers/app";
import { GatedStore } from "../helpers/gated-store";
import { ForwardingStore } from "../../src/store/forwarding-store";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

describe("graceful stop with callers waiting for a task", () => {
  it("a request waiting with ack 'processed' on a stuck task gets 202 before the stop deadline, and its event stays queued", async () => {
    const store = new MemoryStore();
    const source = new WebhookSource({ path: "/slow", port: 0, ack: "processed", ackTimeoutMs: 30_000 });
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const app = new CoreApp("stuck", { store, logger: silentLogger }).task({ source, name: "stuck" }, async () => {
      started();
      await stuck;
    });
    await app.start();
    const answer = fetch(source.url, { method: "POST", body: "x" });
    await running;
    const t0 = Date.now();
    const stopped = app.stop({ timeoutMs: 800 });
    const res = await answer;
    expect(res.status).to.equal(202);
    expect(((await res.json()) as { accepted: boolean }).accepted).to.equal(true);
    expect(Date.now() - t0).to.be.below(800);
    await stopped;
    release();
    // The handler never finished: the event was not completed, so a durable store would redeliver it.
    expect(await store.depth("webhook:stuck")).to.equal(1);
  });
});

describe("graceful stop with ack 'received' writes in flight", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "stop-received-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("waits for an answered event's write before closing: after the restart it runs, and the history has it", async () => {
    const store = new GatedStore(new EmbeddedStore({ dir }));
    const source = new WebhookSource({ path: "/fast", host: "127.0.0.1", port: 0, ack: "received" });
    const app = new CoreApp("received", { store, logger: silentLogger }).task({ source, name: "fast" }, async () => undefined);
    await app.start();
    // "received" answers before the write, which the gate holds.
    const res = await fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' });
    expect(res.status).to.equal(202);
    const { id } = (await res.json()) as { id: string };
    expect(store.entered).to.equal(1);
    const stopped = app.stop({ timeoutMs: 5_000 });
    await sleep(300);
    store.openGate();
    await stopped;

    const ran: string[] = [];
    const again = new CoreApp("received", { store: new EmbeddedStore({ dir }), logger: silentLogger }).task(
      { source: new WebhookSource({ path: "/fast", host: "127.0.0.1", port: 0, ack: "received" }), name: "fast" },
      async (ctx) => void ran.push(ctx.eventId),
    );
    await again.start();
    try {
      await until(() => ran.length === 1);
      expect(ran).to.deep.equal([id]);
      expect((await again.events.get(id))?.id).to.equal(id);
    } finally {
      await again.stop();
    }
  });
});

describe("graceful stop with a handler that outlives it", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "stop-outlived-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const kind of ["single", "batch"] as const) {
    it(`(${kind}) its task timeout and its late end, after stop() gave up on it, log nothing, tell no listener and write nothing: it runs again at the next start`, async () => {
      const lines: LogLine[] = [];
      const told: string[] = [];
      const source = new WebhookSource({ path: "/slow", host: "127.0.0.1", port: 0 });
      const handler = async (): Promise<void> => {
        started.open();
        await sleep(900);
      };
      const started = gate();
      const app = new CoreApp("outlived", { store: new EmbeddedStore({ dir }), logger: recordingLogger(lines) });
      if (kind === "single") app.task({ source, name: "slow", timeoutMs: 400, retry: { attempts: 3, initialDelayMs: 10 } }, handler);
      else app.task({ source, name: "slow", timeoutMs: 400, retry: { attempts: 3, initialDelayMs: 10 }, batch: { maxSize: 1, maxWaitMs: 60_000 } }, handler);
      app.on("retry", () => void told.push("retry")).on("deadLetter", () => void told.push("deadLetter"));
      await app.start();
      expect((await fetch(source.url, { method: "POST", body: "x" })).status).to.equal(202);
      await started.promise;
      await app.stop({ timeoutMs: 100 });
      const stoppedAt = lines.findIndex((l) => l.msg === "stopped");
      expect(stoppedAt).to.be.above(-1);
      // Past the task's timeout (400 ms) and the handler's end (900 ms).
      await sleep(1_200);
      expect(lines.slice(stoppedAt + 1).map((l) => l.msg)).to.deep.equal([]);
      expect(told).to.deep.equal([]);

      const attempts: number[] = [];
      const again = new CoreApp("outlived", { store: new EmbeddedStore({ dir }), logger: silentLogger });
      const source2 = new WebhookSource({ path: "/slow", host: "127.0.0.1", port: 0 });
      const record = async (ctx: TaskContext): Promise<void> => void attempts.push(ctx.attempt);
      if (kind === "single") again.task({ source: source2, name: "slow" }, record);
      else again.task({ source: source2, name: "slow", batch: { maxSize: 1, maxWaitMs: 60_000 } }, record);
      await again.start();
      try {
        await until(() => attempts.length === 1);
        // The abandoned run recorded no failure: this is still the first attempt.
        expect(attempts).to.deep.equal([1]);
      } finally {
        await again.stop();
      }
    });
  }
});

describe("pause and resume while the app stops", () => {
  it("say the app is stopping once it no longer follows pauses, not that its store keeps none", async () => {
    let closing!: () => void;
    const closeHeld = new Promise<void>((resolve) => (closing = resolve));
    let closeCalled = false;
    // The store's close waits for the test: pause and resume are asked between the history's stop and it.
    class HeldClose extends ForwardingStore {
      override async close(): Promise<void> {
        closeCalled = true;
        await closeHeld;
        return super.close();
      }
    }
    const source = new WebhookSource({ path: "/p", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("pausing", { store: new HeldClose(new MemoryStore()), logger: silentLogger }).task({ source, name: "p" }, async () => undefined);
    await app.start();
    const stopped = app.stop({ timeoutMs: 1_000 });
    await until(() => closeCalled);
    for (const ask of [() => app.pause("p"), () => app.resume("p")]) {
      const error = await ask().then(() => undefined, (e: unknown) => e as Error);
      expect(error?.message).to.match(/^app\.(pause|resume)\(\): app "pausing" is stopping$/);
    }
    closing();
    await stopped;
  });
});
