import { expect } from "chai";
import { CoreApp, silentLogger } from "../../../src/index";
import { postJson } from "../../helpers/http-client";
import { Collector, webhook } from "../../helpers/app";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

describe("PostgresStore: two app replicas on one schema", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  const apps: CoreApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    await fixture.cleanup();
  });

  async function replica(schema: string, events: Collector): Promise<string> {
    const store = fixture.store({ schema });
    const app = new CoreApp("replicas", { store, logger: silentLogger });
    const source = webhook({ dedupe: "github" });
    app.task({ source, name: "receive", concurrency: 4 }, events.handler);
    apps.push(app);
    await app.start();
    return `http://127.0.0.1:${source.port}/hook`;
  }

  it("share the work of both, each event run once; a redelivery to the other replica is a duplicate", async () => {
    const schema = fixture.schema();
    const a = new Collector();
    const b = new Collector();
    const urls = [await replica(schema, a), await replica(schema, b)];
    const n = 40;
    const replies = await Promise.all(Array.from({ length: n }, (_, i) => postJson(urls[i % 2], { n: i }, { "x-github-delivery": `d-${i}` })));
    expect(replies.map((r) => r.status)).to.deep.equal(replies.map(() => 202));
    await until(() => a.count + b.count === n, 10_000);
    const seen = [...a.events, ...b.events].map((e) => (e.body as { n: number }).n).sort((x, y) => x - y);
    expect(seen).to.deep.equal(Array.from({ length: n }, (_, i) => i));
    expect(a.count).to.be.greaterThan(0);
    expect(b.count).to.be.greaterThan(0);

    // The sender retries delivery d-0 (first sent to replica A) through replica B.
    const again = await postJson(urls[1], { n: 0 }, { "x-github-delivery": "d-0" });
    expect(again.status).to.equal(200);
    expect(again.json()).to.include({ duplicate: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(a.count + b.count).to.equal(n);
  });
});
