import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, silentLogger, WebhookSource, type AckMode } from "../../src/index";

/** The embedded store refusing work, seen from a sender: 503 + Retry-After, never a 2xx. */
describe("embedded store that cannot take more work (HTTP)", function () {
  this.timeout(30_000);
  let dir: string;
  let app: CoreApp | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "refusal-"))));
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  for (const ack of ["persisted", "received", "processed"] as AckMode[]) {
    it(`a data directory that cannot be created: ack "${ack}" answers 503 with Retry-After, and no task runs`, async () => {
      const blocker = join(dir, "not-a-directory");
      writeFileSync(blocker, "x");
      const source = new WebhookSource({ path: "/in", port: 0, ack });
      let ran = 0;
      app = new CoreApp("unwritable", { store: "embedded", dataDir: join(blocker, "data"), logger: silentLogger });
      app.task({ source, name: "t" }, async () => void ran++);
      await app.start();
      for (let i = 0; i < 5; i++) {
        const res = await fetch(source.url, { method: "POST", body: `{"n":${i}}` });
        expect(res.status).to.equal(503);
        expect(res.headers.get("retry-after")).to.match(/^\d+$/);
        const body = (await res.json()) as { error: string; message: string };
        expect(body.error).to.equal("store_unavailable");
        expect(body.message).to.not.include(blocker, "the engine's own error text stays out of the answer");
      }
      await new Promise((r) => setTimeout(r, 50));
      expect(ran).to.equal(0);
    });
  }

  it("past maxBytes sources answer 503 store_full; every 2xx is processed; serving resumes once the task drains the store", async () => {
    const source = new WebhookSource({ path: "/in", port: 0 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const processed = new Set<number>();
    app = new CoreApp("quota", { store: "embedded", dataDir: join(dir, "data"), maxBytes: 192 * 1024, logger: silentLogger });
    app.task({ source, name: "t", concurrency: 4 }, async (_ctx, event: { body: { n: number } }) => {
      await gate;
      processed.add(event.body.n);
    });
    await app.start();
    const padding = "x".repeat(2000);
    const accepted: number[] = [];
    let refused = 0;
    for (let n = 0; n < 400 && refused < 5; n++) {
      const res = await fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n, padding }) });
      if (res.status === 202) accepted.push(n);
      else {
        expect(res.status).to.equal(503);
        expect(((await res.json()) as { error: string }).error).to.equal("store_full");
        refused++;
      }
    }
    expect(refused, "the quota should have been reached").to.equal(5);
    expect(accepted.length).to.be.greaterThan(10);
    release();
    const end = Date.now() + 15_000;
    while (processed.size < accepted.length && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(accepted.filter((n) => !processed.has(n))).to.deep.equal([]);
    // Space freed: the same sender is accepted again.
    let again = 0;
    for (let i = 0; i < 100 && again !== 202; i++) {
      again = (await fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 1000 + i }) })).status;
      if (again !== 202) await new Promise((r) => setTimeout(r, 50));
    }
    expect(again).to.equal(202);
  });
});
