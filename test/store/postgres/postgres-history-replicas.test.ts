import { expect } from "chai";
import { CoreApp, silentLogger, type WebhookEvent } from "../../../src/index";
import { postJson } from "../../helpers/http-client";
import { Collector, sleep, webhook } from "../../helpers/app";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

type Body = { n: number };

describe("event history on PostgreSQL: two app replicas on one schema", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  const apps: CoreApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    await fixture.cleanup();
  });

  async function replica(schema: string, runs: Collector<WebhookEvent<Body>>): Promise<{ app: CoreApp; url: string }> {
    const store = fixture.store({ schema, historyWriter: { delayMs: 20 } });
    const app = new CoreApp("replicas", { store, logger: silentLogger });
    const source = webhook({ path: "/hook" });
    app.task({ source, name: "receive", concurrency: 2 }, runs.handler);
    apps.push(app);
    await app.start();
    return { app, url: `http://127.0.0.1:${source.port}/hook` };
  }

  it("lists, shows and replays from one replica an event the other accepted", async () => {
    const schema = fixture.schema();
    const runsA = new Collector<WebhookEvent<Body>>();
    const runsB = new Collector<WebhookEvent<Body>>();
    const a = await replica(schema, runsA);
    const b = await replica(schema, runsB);

    const reply = await postJson(a.url, { n: 41 }, { "x-request-id": "from-a" });
    expect(reply.status).to.equal(202);
    const id = reply.json<{ id: string }>().id;

    // B sees it (whoever ran it), settled, with A's request as received.
    await until(async () => (await b.app.events.get(id))?.status === "succeeded", 10_000);
    const shown = (await b.app.events.get(id))!;
    expect(shown.origin).to.deep.equal({ kind: "webhook", source: "hook" });
    expect((shown.payload as WebhookEvent<Body>).body).to.deep.equal({ n: 41 });
    expect(shown.runs.map((r) => [r.task, r.outcome])).to.deep.equal([["receive", "success"]]);
    expect((await b.app.events.list({ search: "from-a" })).events.map((e) => e.id)).to.deep.equal([id]);
    expect((await b.app.events.list({ search: "n=41" })).events.map((e) => e.id)).to.deep.equal([id]);

    // B replays it: a new delivery, linked both ways, seen settled from A.
    const replay = await b.app.events.replay(id);
    expect(replay.replayOf).to.equal(id);
    await until(async () => (await a.app.events.get(replay.id))?.status === "succeeded", 10_000);
    expect((await a.app.events.get(id))!.replays).to.deep.equal([replay.id]);
    expect((await a.app.events.get(replay.id))!.replayOf).to.equal(id);
    expect(runsA.count + runsB.count).to.equal(2);
    expect([...runsA.events, ...runsB.events].map((e) => e.body.n)).to.deep.equal([41, 41]);
  });

  it("a pause set on one replica stops the other's runs until resumed", async () => {
    const schema = fixture.schema();
    const runsA = new Collector<WebhookEvent<Body>>();
    const runsB = new Collector<WebhookEvent<Body>>();
    const a = await replica(schema, runsA);
    const b = await replica(schema, runsB);

    await a.app.pause("receive");
    await until(async () => (await b.app.paused()).includes("receive"), 5_000);
    // Give B's watcher its turn: its runner is paused once it has read the set.
    await sleep(100);
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) {
      const reply = await postJson(b.url, { n });
      expect(reply.status).to.equal(202);
      ids.push(reply.json<{ id: string }>().id);
    }
    await sleep(800);
    expect(runsA.count + runsB.count).to.equal(0);
    await until(async () => (await a.app.events.list({ status: "pending" })).events.length === 5, 5_000);

    await a.app.resume("receive");
    await until(() => runsA.count + runsB.count === 5, 10_000);
    await until(async () => (await b.app.events.list({ status: "succeeded" })).events.length === 5, 10_000);
  });

  it("a pause heard by a replica whose read of the paused set fails once still stops that replica's runs", async () => {
    const schema = fixture.schema();
    const runsA = new Collector<WebhookEvent<Body>>();
    const runsB = new Collector<WebhookEvent<Body>>();
    const a = await replica(schema, runsA);
    const b = await replica(schema, runsB);
    // B's next read of the set fails, as a statement does when the database hiccups.
    const pauses = b.app.store.pauses!;
    const read = pauses.paused.bind(pauses);
    let failed = 0;
    pauses.paused = () => (failed++ === 0 ? Promise.reject(new Error("connection terminated unexpectedly")) : read());

    await a.app.pause("receive");
    await until(() => failed > 0, 5_000);
    await sleep(1_500);
    for (let n = 0; n < 5; n++) expect((await postJson(b.url, { n })).status).to.equal(202);
    await sleep(800);
    expect(runsA.count + runsB.count, "runs of the paused task").to.equal(0);
    await a.app.resume("receive");
    await until(() => runsA.count + runsB.count === 5, 10_000);
  });
});
