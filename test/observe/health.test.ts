import { expect } from "chai";
import { once } from "node:events";
import { join } from "node:path";
import { useApps, webhook } from "../helpers/app";
import { startChild } from "../e2e/child-app";

async function probe(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const reply = await fetch(url);
  return { status: reply.status, body: (await reply.json()) as Record<string, unknown> };
}

describe("health (/livez, /readyz)", () => {
  const newApp = useApps();

  it("answers ready once started with a healthy store, naming each check; 503 after stop() began", async () => {
    const app = newApp("health-app", { health: { livePath: "/alive", readyPath: "/ready" } });
    const source = webhook({ path: "/in" });
    app.task({ source, name: "t" }, () => undefined);
    expect(app.readiness().ready).to.equal(false);
    await app.start();
    const origin = new URL(source.url).origin;
    expect(await probe(`${origin}/alive`)).to.deep.equal({ status: 200, body: { live: true } });
    const ready = await probe(`${origin}/ready`);
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.equal({ ready: true, checks: { started: { ok: true }, store: { ok: true }, notShuttingDown: { ok: true } } });
    const stopping = app.stop();
    expect(app.readiness()).to.deep.include({ ready: false });
    expect(app.readiness().checks.notShuttingDown.ok).to.equal(false);
    await stopping;
  });

  it("on SIGTERM readiness turns 503 while liveness still answers, then the process drains and exits 0", async function () {
    this.timeout(20_000);
    const child = await startChild(join(__dirname, "fixtures/health-app.js"), { DELAY_MS: "1500" });
    const exited = once(child.child, "exit");
    expect((await probe(`${child.base}/readyz`)).status).to.equal(200);
    const signalledAt = Date.now();
    child.child.kill("SIGTERM");
    let ready = await probe(`${child.base}/readyz`);
    while (ready.status === 200 && Date.now() - signalledAt < 1_000) ready = await probe(`${child.base}/readyz`);
    expect(ready.status).to.equal(503);
    expect(ready.body).to.deep.include({ ready: false });
    expect((ready.body.checks as Record<string, { ok: boolean }>).notShuttingDown.ok).to.equal(false);
    expect((await probe(`${child.base}/livez`)).status).to.equal(200);
    // Webhooks are still taken during the delay.
    expect((await fetch(`${child.base}/in`, { method: "POST", body: "{}" })).status).to.equal(202);
    const [code] = (await exited) as [number | null];
    expect(code).to.equal(0);
    expect(Date.now() - signalledAt).to.be.at.least(1_400);
  });

  it("refuses malformed health and metrics options", () => {
    expect(() => newApp("bad-health", { health: { readyPath: "ready" } })).to.throw(/health.readyPath must be a path/);
    expect(() => newApp("bad-metrics", { metrics: { port: 70000 } })).to.throw(/metrics.port/);
  });
});
