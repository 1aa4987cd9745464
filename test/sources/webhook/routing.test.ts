import { expect } from "chai";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { freePort, postJson, send } from "../../helpers/http-client";
import { httpRequest, rawRequest } from "../../helpers/raw-http";

describe("WebhookSource: routing on a shared listener", () => {
  const makeApp = useApps();

  it("serves two sources on one port, each request to the task of its path", async () => {
    const app = makeApp();
    const github = webhook({ path: "/hooks/github" });
    const stripe = webhook({ path: "/hooks/stripe" });
    const a = new Collector();
    const b = new Collector();
    app.task({ source: github, name: "github" }, a.handler);
    app.task({ source: stripe, name: "stripe" }, b.handler);
    await app.start();
    expect(github.port).to.be.above(0);
    expect(github.port).to.equal(stripe.port);
    expect(github.url).to.equal(`http://127.0.0.1:${github.port}/hooks/github`);
    expect(stripe.url).to.equal(`http://127.0.0.1:${github.port}/hooks/stripe`);
    expect((await postJson(github.url, { n: 1 })).status).to.equal(202);
    expect((await postJson(stripe.url, { n: 2 })).status).to.equal(202);
    expect((await postJson(github.url, { n: 3 })).status).to.equal(202);
    await a.waitFor(2);
    await b.waitFor(1);
    await sleep(30);
    expect(a.events.map((e) => e.body)).to.deep.equal([{ n: 1 }, { n: 3 }]);
    expect(b.events.map((e) => e.body)).to.deep.equal([{ n: 2 }]);
    expect(a.events.map((e) => e.path)).to.deep.equal(["/hooks/github", "/hooks/github"]);
  });

  it("serves three sources on one port, including nested and root paths", async () => {
    const app = makeApp();
    const paths = ["/", "/a", "/a/b"];
    const collectors = paths.map(() => new Collector());
    const sources = paths.map((path) => webhook({ path }));
    sources.forEach((source, i) => app.task({ source, name: `t${i}` }, collectors[i].handler));
    await app.start();
    const port = sources[0].port;
    expect(sources.every((s) => s.port === port)).to.equal(true);
    for (let round = 0; round < 2; round++) {
      for (const [i, path] of paths.entries()) {
        const reply = await send(`http://127.0.0.1:${port}${path}?round=${round}`, { body: `${i}`, headers: { "content-type": "text/plain" } });
        expect(reply.status, path).to.equal(202);
      }
    }
    for (const [i, collector] of collectors.entries()) {
      await collector.waitFor(2);
      expect(collector.events.map((e) => e.body), paths[i]).to.deep.equal([`${i}`, `${i}`]);
      expect(collector.events.map((e) => e.query.round)).to.deep.equal(["0", "1"]);
    }
    await sleep(30);
    expect(collectors.map((c) => c.count)).to.deep.equal([2, 2, 2]);
  });

  it("ignores a trailing slash, on the request and on the configured path", async () => {
    const app = makeApp();
    const plain = webhook({ path: "/plain" });
    const slashed = webhook({ path: "/slashed/" });
    const a = new Collector();
    const b = new Collector();
    app.task({ source: plain, name: "plain" }, a.handler);
    app.task({ source: slashed, name: "slashed" }, b.handler);
    await app.start();
    const base = `http://127.0.0.1:${plain.port}`;
    expect((await postJson(`${base}/plain/`, {})).status).to.equal(202);
    expect((await postJson(`${base}/plain`, {})).status).to.equal(202);
    expect((await postJson(`${base}/slashed`, {})).status).to.equal(202);
    expect((await postJson(`${base}/slashed/?x=1`, {})).status).to.equal(202);
    await a.waitFor(2);
    await b.waitFor(2);
    expect(b.events[1].query).to.deep.equal({ x: "1" });
    // Only one slash is forgiven, and prefixes do not match.
    expect((await postJson(`${base}/plain//`, {})).status).to.equal(404);
    expect((await postJson(`${base}/plain/more`, {})).status).to.equal(404);
    expect((await postJson(`${base}/pla`, {})).status).to.equal(404);
  });

  it("answers an unknown path with 404 JSON not_found", async () => {
    const app = makeApp();
    const source = webhook({ path: "/hook" });
    const events = new Collector();
    app.task({ source, name: "t" }, events.handler);
    await app.start();
    for (const method of ["POST", "GET", "DELETE"]) {
      const reply = await send(`http://127.0.0.1:${source.port}/nope?x=1`, { method, body: method === "GET" ? undefined : "{}" });
      expect(reply.status, method).to.equal(404);
      expect(reply.headers.get("content-type")).to.match(/^application\/json/);
      const answer = reply.json();
      expect(answer.error).to.equal("not_found");
      expect(answer.message).to.be.a("string");
    }
    // Path matching is case-sensitive.
    expect((await postJson(`http://127.0.0.1:${source.port}/HOOK`, {})).status).to.equal(404);
    await sleep(30);
    expect(events.count).to.equal(0);
  });

  it("answers a method not listed with 405 and an Allow header, and makes no event", async () => {
    const app = makeApp();
    const source = webhook({ path: "/hook", methods: ["post", "PUT"] });
    const events = new Collector();
    app.task({ source, name: "t" }, events.handler);
    await app.start();
    for (const method of ["GET", "DELETE", "PATCH"]) {
      const reply = await send(source.url, { method, body: method === "GET" ? undefined : "{}" });
      expect(reply.status, method).to.equal(405);
      expect(reply.headers.get("allow")).to.equal("POST, PUT");
      expect(reply.json().error).to.equal("method_not_allowed");
    }
    const head = await rawRequest(source.port, httpRequest("HEAD", "/hook"), 3_000, { head: true });
    expect(head.status).to.equal(405);
    expect(head.headers.allow).to.equal("POST, PUT");
    // Listed methods, given in any case, work.
    expect((await send(source.url, { method: "PUT", body: "1", headers: { "content-type": "application/json" } })).status).to.equal(202);
    expect((await send(source.url, { method: "POST", body: "2", headers: { "content-type": "application/json" } })).status).to.equal(202);
    await events.waitFor(2);
    await sleep(30);
    expect(events.events.map((e) => e.method)).to.deep.equal(["PUT", "POST"]);
  });

  it("lets two sources share a path with different methods; Allow lists both", async () => {
    const app = makeApp();
    const create = webhook({ path: "/items", methods: ["POST"] });
    const replace = webhook({ path: "/items", methods: ["PUT"] });
    const a = new Collector();
    const b = new Collector();
    app.task({ source: create, name: "create" }, a.handler);
    app.task({ source: replace, name: "replace" }, b.handler);
    await app.start();
    expect((await send(create.url, { method: "POST", body: "{}" })).status).to.equal(202);
    expect((await send(create.url, { method: "PUT", body: "{}" })).status).to.equal(202);
    const reply = await send(create.url, { method: "DELETE" });
    expect(reply.status).to.equal(405);
    expect(reply.headers.get("allow")?.split(/,\s*/).sort()).to.deep.equal(["POST", "PUT"]);
    await a.waitFor(1);
    await b.waitFor(1);
    expect(a.events[0].method).to.equal("POST");
    expect(b.events[0].method).to.equal("PUT");
  });

  it("refuses to start when two sources claim the same method and path on one host:port, naming both", async () => {
    const app = makeApp();
    const first = webhook({ path: "/dup", methods: ["POST", "PUT"] });
    const second = webhook({ path: "/dup/", methods: ["PUT"] });
    app.task({ source: first, name: "first_task" }, async () => undefined);
    app.task({ source: second, name: "second_task" }, async () => undefined);
    let error: Error | undefined;
    await app.start().catch((e: Error) => (error = e));
    expect(error, "start() must reject").to.be.instanceOf(Error);
    expect(error!.message).to.include("PUT /dup");
    expect(error!.message).to.include("first_task");
    expect(error!.message).to.include("second_task");
    expect(app.running).to.equal(false);
  });

  it("lets the same path live on two ports", async () => {
    const app = makeApp();
    const one = webhook({ path: "/same" });
    const two = webhook({ path: "/same", port: await freePort() });
    const a = new Collector();
    const b = new Collector();
    app.task({ source: one, name: "one" }, a.handler);
    app.task({ source: two, name: "two" }, b.handler);
    await app.start();
    expect(one.port).to.not.equal(two.port);
    expect((await postJson(one.url, { to: "one" })).status).to.equal(202);
    expect((await postJson(two.url, { to: "two" })).status).to.equal(202);
    await a.waitFor(1);
    await b.waitFor(1);
    expect(a.events[0].body).to.deep.equal({ to: "one" });
    expect(b.events[0].body).to.deep.equal({ to: "two" });
  });

  it("serves the user's Express routes beside the webhooks on the same port", async () => {
    const app = makeApp();
    const source = webhook({ path: "/hook" });
    const events = new Collector();
    app.task({ source, name: "t" }, events.handler);
    const router = app.express("127.0.0.1", 0);
    router.get("/health", (_req, res) => {
      res.json({ ok: true });
    });
    // A user route on the webhook's path: the webhook wins.
    router.post("/hook", (_req, res) => {
      res.status(299).send("express");
    });
    await app.start();
    const health = await send(`http://127.0.0.1:${source.port}/health`, { method: "GET" });
    expect(health.status).to.equal(200);
    expect(health.json()).to.deep.equal({ ok: true });
    const hook = await postJson(source.url, { x: 1 });
    expect(hook.status).to.equal(202);
    expect(hook.json().accepted).to.equal(true);
    await events.waitFor(1);
    // Express handles what no webhook claims, with the same JSON 404.
    const missing = await send(`http://127.0.0.1:${source.port}/missing`, { method: "GET" });
    expect(missing.status).to.equal(404);
    expect(missing.json().error).to.equal("not_found");
  });
});
