import { expect } from "chai";
import { CoreApp, MemoryStore, silentLogger, WebhookSource } from "../../src/index";

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
