import { expect } from "chai";
import { sleep } from "../helpers/app";
import { until } from "../helpers/wait";
import { ENGINES, useEngineApps } from "../helpers/engine-apps";


/** Only `undefined` means "emit nothing": every other falsy value is a value the next task must get. */
describe("a task emitting 0, an empty string, false or null", function () {
  this.timeout(20_000);
  const appOn = useEngineApps("falsy");

  for (const engine of ENGINES) {
    it(`${engine}: the next task receives each as that value, and undefined emits nothing`, async () => {
      const app = appOn(engine, "falsy");
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
