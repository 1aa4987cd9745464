import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, silentLogger } from "../../src/index";
import { Collector, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";

/**
 * A deploy that gives a deduplicating source a second task moves its markers to the source's
 * namespace: a sender's repeat of a delivery taken before the deploy must still be a
 * duplicate, not a second run of the task that had it already.
 */
describe("fan-out: deduplication across a deploy changing a source's tasks", () => {
  let dir: string;
  const apps: CoreApp[] = [];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "fanout-dedupe-"))));
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (tasks: readonly string[]) => {
    const app = new CoreApp("dedupe-deploy", { store: "embedded", dataDir: dir, logger: silentLogger });
    apps.push(app);
    const hook = webhook({ path: "/gh", dedupe: "github" });
    const runs = new Map(tasks.map((t) => [t, new Collector()]));
    for (const [name, c] of runs) app.task({ source: hook, name }, c.handler);
    await app.start();
    return { app, hook, runs };
  };

  it("a second task added: a repeat of a delivery the lone task took is a duplicate", async () => {
    const before = await start(["a"]);
    const first = await postJson(before.hook.url, { n: 1 }, { "x-github-delivery": "d-1" });
    expect(first.status).to.equal(202);
    await before.runs.get("a")!.waitFor(1);
    await before.app.stop();
    apps.splice(0);

    const after = await start(["a", "b"]);
    const again = await postJson(after.hook.url, { n: 1 }, { "x-github-delivery": "d-1" });
    expect(again.status).to.equal(200);
    expect(again.json()).to.deep.include({ duplicate: true, id: first.json<{ id: string }>().id });
  });
});
