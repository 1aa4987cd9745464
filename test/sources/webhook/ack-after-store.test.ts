import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, EmbeddedStore, silentLogger, WebhookSource, type AckMode } from "../../../src/index";
import { sleep } from "../../helpers/app";
import { GatedStore } from "../../helpers/gated-store";
import { until } from "../../helpers/wait";

/**
 * "A 2xx only once the event is stored", seen directly: the store's write is held open, and no
 * answer may arrive until it is let through.
 */
describe("WebhookSource: no 2xx before the store has the event", function () {
  this.timeout(20_000);
  let dir: string;
  let app: CoreApp | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "ack-gate-"))));
  afterEach(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  for (const ack of ["persisted", "processed"] as AckMode[]) {
    it(`ack "${ack}": the answer waits for the held write, then comes once it is through`, async () => {
      const store = new GatedStore(new EmbeddedStore({ dir: join(dir, "data") }));
      const source = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0, ack });
      const ran: string[] = [];
      app = new CoreApp("gated", { store, logger: silentLogger });
      app.task({ source, name: "t" }, async (ctx) => void ran.push(ctx.eventId));
      await app.start();

      let answered: Response | undefined;
      const request = fetch(source.url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' }).then((res) => (answered = res));
      await until(() => store.entered === 1);
      await sleep(300);
      expect(answered, "an answer before the event was stored").to.equal(undefined);
      expect(ran).to.deep.equal([]);

      store.openGate();
      const res = await request;
      expect(res.status).to.equal(202);
      const { id } = (await res.json()) as { id: string };
      if (ack === "processed") expect(ran).to.deep.equal([id]);
      await until(() => ran.length === 1);
      expect(ran).to.deep.equal([id]);
    });
  }
});
