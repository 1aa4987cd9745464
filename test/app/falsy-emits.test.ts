import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, silentLogger, type CoreAppOptions } from "../../src/index";
import { sleep } from "../helpers/app";
import { until } from "../helpers/wait";
import { PostgresFixture } from "../store/postgres/postgres-fixture";

type Engine = "memory" | "embedded" | "postgres";

/** Only `undefined` means "emit nothing": every other falsy value is a value the next task must get. */
describe("a task emitting 0, an empty string, false or null", function () {
  this.timeout(20_000);
  let dir: string;
  const postgres = new PostgresFixture();
  const apps: CoreApp[] = [];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "falsy-"))));
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    await postgres.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const engine of ["memory", "embedded", "postgres"] as Engine[]) {
    it(`${engine}: the next task receives each as that value, and undefined emits nothing`, async () => {
      const store: CoreAppOptions = engine === "memory" ? { store: "memory" } : engine === "embedded" ? { store: "embedded", dataDir: join(dir, "data") } : { store: postgres.store() };
      const app = new CoreApp("falsy", { ...store, logger: silentLogger });
      apps.push(app);
      const received: unknown[] = [];
      app.task({ source: "in", emit: "out", name: "produce" }, async (_ctx, event: { value: unknown }) => event.value);
      app.task({ source: "out", name: "consume" }, async (_ctx, value: unknown) => void received.push(value));
      await app.start();
      const values: unknown[] = [0, "", false, null, undefined];
      for (const [i, value] of values.entries()) {
        await app.store.enqueue("in", { id: `e${i}`, payload: { value }, attempts: 0, enqueuedAt: Date.now() });
      }
      await until(() => received.length >= 4);
      await until(async () => (await app.store.depth("in")) === 0);
      await sleep(100);
      expect(received).to.have.deep.members([0, "", false, null]);
      expect(received).to.have.length(4);
      expect(received.map((v) => typeof v)).to.have.members(["number", "string", "boolean", "object"]);
    });
  }
});
