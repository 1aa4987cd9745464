import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { CoreApp, silentLogger, WebhookSource } from "../../src/index";
import { testApp } from "../../src/testing/index";

const leftovers = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith("webhook-tasks-test-")));

/**
 * testApp(app, { store: "embedded" }) opened the app's own data directory (./.data/<name>): the
 * one its development run uses. With that run up, the test was refused ("in use"); without it,
 * the test's events went into the development store, and the test got what waited there.
 */
describe("testing: testApp with the embedded store", () => {
  let dataDir: string;
  let saved: string | undefined;
  const started: CoreApp[] = [];
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "kit-dev-"));
    saved = process.env.WEBHOOK_TASKS_DATA_DIR;
    process.env.WEBHOOK_TASKS_DATA_DIR = dataDir; // the apps' default data directory
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
    if (saved === undefined) delete process.env.WEBHOOK_TASKS_DATA_DIR;
    else process.env.WEBHOOK_TASKS_DATA_DIR = saved;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const build = () => {
    const hook = new WebhookSource({ path: "/hooks/dev", port: 0 });
    const app = new CoreApp("kit-dev", { logger: silentLogger }); // embedded, in dataDir
    app.task({ source: hook, name: "record" }, async (ctx, event) => event.body);
    return { app, hook };
  };

  it("runs on a directory of its own while the app's development run holds its data directory", async () => {
    const dev = build();
    await dev.app.start();
    started.push(dev.app);
    const before = leftovers();

    const { app, hook } = build();
    const t = await testApp(app, { store: "embedded" });
    let id: string;
    try {
      expect(app.store.engine).to.equal("embedded");
      const run = await t.send(hook, { body: { test: true } });
      expect(run.status).to.equal(202);
      expect(run.result).to.deep.equal({ test: true });
      id = (run.body as { id: string }).id;
    } finally {
      await t.stop();
    }
    expect(await dev.app.events.get(id), "the test's event in the development store").to.equal(undefined);
    expect([...leftovers()].filter((name) => !before.has(name)), "temporary directories left").to.deep.equal([]);
  });
});
