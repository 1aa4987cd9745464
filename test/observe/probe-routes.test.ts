import { expect } from "chai";
import { CoreApp, silentLogger, WebhookSource } from "../../src/index";

/** A webhook path equal to /metrics, /livez or /readyz would answer the probe with 405 for ever. */
describe("observability routes and webhook paths", () => {
  const apps: CoreApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 1_000 })));
  });

  for (const [path, options] of [
    ["/readyz", { health: true }],
    ["/livez", { health: { livePath: "/livez" } }],
    ["/metrics", { metrics: { defaultMetrics: false } }],
    ["/ops/ready", { health: { readyPath: "/ops/ready" } }],
  ] as const) {
    it(`start() refuses a webhook source on ${path} when the app serves that probe there`, async () => {
      const app = new CoreApp("clash", { store: "memory", logger: silentLogger, tracing: false, ...options });
      apps.push(app);
      app.task({ source: new WebhookSource({ path, host: "127.0.0.1", port: 0 }), name: "t" }, async () => undefined);
      let failure: unknown;
      await app.start().catch((error: unknown) => (failure = error));
      expect(String((failure as Error | undefined)?.message)).to.match(/route conflict/).and.contain(path);
    });
  }

  it("a webhook path beside the probes is fine, and each answers", async () => {
    const source = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("no-clash", { store: "memory", logger: silentLogger, tracing: false, health: true, metrics: { defaultMetrics: false } });
    apps.push(app);
    app.task({ source, name: "t" }, async () => undefined);
    await app.start();
    const origin = new URL(source.url).origin;
    expect((await fetch(`${origin}/readyz`)).status).to.equal(200);
    expect((await fetch(`${origin}/metrics`)).status).to.equal(200);
  });

  it("answers the probes and /metrics on their exact paths only (not in other case, not with a trailing slash)", async () => {
    const source = new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("exact-paths", { store: "memory", logger: silentLogger, tracing: false, health: true, metrics: { defaultMetrics: false } });
    apps.push(app);
    app.task({ source, name: "t" }, async () => undefined);
    await app.start();
    const origin = new URL(source.url).origin;
    for (const path of ["/METRICS", "/metrics/", "/Metrics", "/READYZ", "/readyz/", "/LIVEZ", "/livez/"]) {
      const response = await fetch(`${origin}${path}`);
      expect(response.status, path).to.equal(404);
      expect(await response.json(), path).to.include({ error: "not_found" });
    }
    expect((await fetch(`${origin}/metrics?x=1`)).status).to.equal(200);
    expect((await fetch(`${origin}/livez`)).status).to.equal(200);
  });
});
