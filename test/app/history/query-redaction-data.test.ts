import { expect } from "chai";
import { Queue, type WebhookEvent } from "../../../src/index";
import { Collector, useApps, webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { until } from "../../helpers/wait";

type Lookup = { query: { code: string; key: string; page: number } };

/** A value a task emits is the app's own data: a field named `query` in it is no request's query string. */
describe("event history: an emitted value's own `query` field is kept as emitted", function () {
  this.timeout(20_000);
  const newApp = useApps();

  it("keeps { query: { code, key } } of an emitted value, and its replay hands the task the real values", async () => {
    const app = newApp();
    const hook = webhook({ path: "/lookup" });
    const lookups = new Queue<Lookup>("lookups");
    const used = new Collector<Lookup>();
    app.task({ source: hook, name: "make", emit: lookups }, (_ctx, e: WebhookEvent<{ sku: string }>) => ({ query: { code: e.body.sku, key: "warehouse-7", page: 1 } }));
    app.task({ source: lookups, name: "use" }, used.handler);
    await app.start();
    const id = (await postJson(hook.url, { sku: "SKU-1" })).json<{ id: string }>().id;
    await used.waitFor(1);
    expect(used.events[0].query).to.deep.equal({ code: "SKU-1", key: "warehouse-7", page: 1 });
    await until(async () => ((await app.events.get(id))?.children.length ?? 0) === 1);
    const childId = (await app.events.get(id))!.children[0]!;
    expect(((await app.events.get(childId))!.payload as Lookup).query).to.deep.equal({ code: "SKU-1", key: "warehouse-7", page: 1 });
    await app.events.replay(childId);
    await used.waitFor(2);
    expect(used.events[1].query).to.deep.equal({ code: "SKU-1", key: "warehouse-7", page: 1 });
  });
});
