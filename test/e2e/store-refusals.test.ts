import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, silentLogger, StoreOpenError, WebhookSource } from "../../src/index";

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

  it("a data directory that cannot be created: start() fails with one line naming it, and nothing listens", async () => {
    const blocker = join(dir, "not-a-directory");
    writeFileSync(blocker, "x");
    const source = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
    let ran = 0;
    app = new CoreApp("unwritable", { store: "embedded", dataDir: join(blocker, "data"), logger: silentLogger });
    app.task({ source, name: "t" }, async () => void ran++);
    let failure: unknown;
    await app.start().catch((error: unknown) => (failure = error));
    expect(failure).to.be.instanceOf(StoreOpenError);
    expect((failure as Error).message).to.match(new RegExp(`^cannot open the embedded store in ${join(blocker, "data")}: `));
    expect((failure as Error).message).not.to.contain("\n");
    expect(source.port, "no listener was bound").to.equal(0);
    expect(app.readiness().ready).to.equal(false);
    expect(ran).to.equal(0);
  });

  it("an app named with a dot, in a mktemp-style directory, stores and runs its webhooks", async () => {
    const source = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
    const ran: unknown[] = [];
    app = new CoreApp("shop.orders", { store: "embedded", dataDir: join(mkdtempSync(join(dir, "tmp.")), ".data", "shop.orders"), logger: silentLogger, health: true });
    app.task({ source, name: "t" }, async (_ctx, event: { body: unknown }) => void ran.push(event.body));
    await app.start();
    expect((await fetch(new URL("/readyz", source.url))).status).to.equal(200);
    const res = await fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' });
    expect(res.status).to.equal(202);
    const end = Date.now() + 5_000;
    while (ran.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(ran).to.deep.equal([{ n: 1 }]);
  });

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
