import { expect } from "chai";
import { Queue, WebhookSource } from "../../../src/index";
import { postJson } from "../../helpers/http-client";
import { ENGINES, useEngineApps } from "../../helpers/engine-apps";
import { until } from "../../helpers/wait";

interface Emitted {
  readonly n: number;
  readonly big: bigint;
  readonly when: Date;
  readonly nested: { readonly b: bigint };
}

/*
 * A value a task emits may hold what JSON has no type for (docs/faults.md): a bigint, a Date. A
 * search of the history compares a field as PostgreSQL's history keeps it (a bigint's digits, a
 * Date's ISO text, both strings there): found the same way on every engine, and one such value
 * never makes a whole search fail.
 */
describe("engine conformance: searching emitted values that JSON has no type for", function () {
  this.timeout(30_000);
  const engineApp = useEngineApps("emitted-search");

  for (const engine of ENGINES) {
    it(`finds a bigint by its digits and a Date by its ISO text, and fails no search (${engine})`, async () => {
      const app = engineApp(engine, "emits");
      const hook = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
      const values = new Queue<Emitted>("values");
      app.task({ source: hook, name: "make", emit: values }, async () => ({ n: 1, big: 5n, when: new Date(0), nested: { b: 7n } }));
      app.task({ source: values, name: "use" }, async () => undefined);
      await app.start();
      const id = (await postJson(hook.url, { n: 0 })).json<{ id: string }>().id;
      await until(async () => (await app.events.get(id))?.children.length === 1);
      const [child] = (await app.events.get(id))!.children;
      const found = async (search: string) => (await app.events.list({ search })).events.map((e) => e.id);
      expect(await found("big=5")).to.deep.equal([child]);
      expect(await found("when=1970-01-01T00:00:00.000Z")).to.deep.equal([child]);
      expect(await found('nested={"b":"7"}')).to.deep.equal([child]);
      expect(await found("nested.b=7")).to.deep.equal([child]);
      expect(await found("n=1")).to.deep.equal([child]);
      expect(await found("big=6")).to.deep.equal([]);
    });
  }
});
