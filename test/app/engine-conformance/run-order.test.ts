import { expect } from "chai";
import { WebhookSource } from "../../../src/index";
import { postJson } from "../../helpers/http-client";
import { ENGINES, useEngineApps } from "../../helpers/engine-apps";
import { until } from "../../helpers/wait";

/*
 * An event's runs are listed oldest first (docs/history.md): by when each started, on every
 * engine, also when the tasks of a fanned-out event overlap and the one that started first ends
 * last (the order the runs ended in is the order they were noted).
 */
describe("engine conformance: runs of overlapping tasks, oldest first", function () {
  this.timeout(30_000);
  const engineApp = useEngineApps("run-order");

  for (const engine of ENGINES) {
    it(`lists a slow run that started first before a quick one that ended first (${engine})`, async () => {
      const app = engineApp(engine, "order");
      const hook = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
      let slowStarted = false;
      let quickDone = false;
      // Slow starts first and ends last: it waits for quick, which is held by a pause until slow is under way.
      app.task({ source: hook, name: "slow" }, async () => {
        slowStarted = true;
        await until(() => quickDone, 10_000);
      });
      app.task({ source: hook, name: "quick" }, async () => void (quickDone = true));
      await app.start();
      await app.pause("quick");
      const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
      await until(() => slowStarted, 10_000);
      await new Promise((r) => setTimeout(r, 20));
      await app.resume("quick");
      await until(async () => (await app.events.get(id))?.runs.length === 2, 10_000);
      const runs = (await app.events.get(id))!.runs;
      expect(runs.map((r) => r.task)).to.deep.equal(["slow", "quick"]);
      expect(runs[0]!.startedAt).to.be.lessThan(runs[1]!.startedAt);
    });
  }
});
