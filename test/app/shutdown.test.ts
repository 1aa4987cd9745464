import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { CoreApp, EmbeddedStore, MemoryStore, silentLogger, WebhookSource } from "../../src/index";
import { sleep } from "../helpers/app";
import { GatedStore } from "../helpers/gated-store";
import { until } from "../helpers/wait";

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
