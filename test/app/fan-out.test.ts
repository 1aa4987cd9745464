import { expect } from "chai";
import { Queue, type WebhookEvent } from "../../src/index";
import { Collector, sleep, useApps, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

type Kind = { kind: string; n?: number };
const kindOf = (e: WebhookEvent) => (e.body as Kind).kind;
const FAST_RETRY = { initialDelayMs: 5, maxDelayMs: 5, factor: 1 };

describe("fan-out: one source or queue, several tasks", () => {
  const newApp = useApps();

  it("one source, three tasks with filters: each gets exactly its events, one copy each", async () => {
    const app = newApp();
    const hook = webhook({ path: "/org" });
    const pushes = new Collector();
    const issues = new Collector();
    const all = new Collector();
    app.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, pushes.handler);
    app.task({ source: hook, name: "issues", filter: (e) => kindOf(e) === "issue" }, issues.handler);
    app.task({ source: hook, name: "all" }, all.handler);
    await app.start();
    const kinds = ["push", "issue", "push", "star", "issue", "push"];
    const ids: string[] = [];
    for (const [n, kind] of kinds.entries()) {
      const reply = await postJson(hook.url, { kind, n });
      expect(reply.status).to.equal(202);
      ids.push(reply.json<{ id: string }>().id);
    }
    await all.waitFor(6);
    await pushes.waitFor(3);
    await issues.waitFor(2);
    await sleep(50);
    expect(pushes.events.map((e) => (e.body as Kind).n)).to.deep.equal([0, 2, 5]);
    expect(issues.events.map((e) => (e.body as Kind).n)).to.deep.equal([1, 4]);
    expect(all.events.map((e) => (e.body as Kind).n)).to.deep.equal([0, 1, 2, 3, 4, 5]);
    // Each task's copy has its own id, made from the event's (the 202's) id and the task's name.
    expect(pushes.received[0].ctx.eventId).to.equal(`${ids[0]}@pushes`);
    expect(all.received[3].ctx.eventId).to.equal(`${ids[3]}@all`);
    expect(app.tasks.map((t) => t.queue)).to.deep.equal(["webhook:pushes", "webhook:issues", "webhook:all"]);
  });

  it("one task failing to its dead letters leaves the others' runs at one each", async () => {
    const app = newApp();
    const hook = webhook({ path: "/org" });
    const good1 = new Collector();
    const good2 = new Collector();
    let failures = 0;
    app.task({ source: hook, name: "good1" }, good1.handler);
    app.task({ source: hook, name: "bad", retry: { attempts: 3, ...FAST_RETRY } }, () => {
      failures++;
      throw new Error("always");
    });
    app.task({ source: hook, name: "good2" }, good2.handler);
    await app.start();
    const id = (await postJson(hook.url, { kind: "x" })).json<{ id: string }>().id;
    await until(async () => (await app.deadLetters.list()).length === 1);
    await sleep(100);
    expect(failures).to.equal(3);
    expect(good1.count).to.equal(1);
    expect(good2.count).to.equal(1);
    const [letter] = await app.deadLetters.list();
    expect(letter).to.include({ task: "bad", queue: "webhook:bad" });
    expect(letter.message.id).to.equal(`${id}@bad`);
    // A replay concerns that task's copy only.
    expect(await app.deadLetters.replay(letter.message.id)).to.equal(true);
    await until(() => failures === 4);
    await sleep(50);
    expect([good1.count, good2.count]).to.deep.equal([1, 1]);
  });

  it("a value emitted to a queue with two consumers reaches both (each with its own filter, queue and ordering key)", async () => {
    const app = newApp();
    const hook = webhook({ path: "/in" });
    const totals = new Queue<{ n: number }>("totals");
    const audit = new Collector<{ n: number }>();
    const big = new Collector<{ n: number }>();
    app.task({ source: hook, name: "ingest", emit: totals }, async (_ctx, e: WebhookEvent) => ({ n: (e.body as Kind).n ?? 0 }));
    app.task({ source: totals, name: "audit", orderingKey: (t) => `k${t.n % 2}` }, audit.handler);
    app.task({ source: totals, name: "big", filter: (t) => t.n >= 10 }, big.handler);
    await app.start();
    for (const n of [1, 12, 3, 40]) expect((await postJson(hook.url, { kind: "x", n })).status).to.equal(202);
    await audit.waitFor(4);
    await big.waitFor(2);
    await sleep(50);
    expect(audit.events.map((t) => t.n).sort((a, b) => a - b)).to.deep.equal([1, 3, 12, 40]);
    expect(big.events.map((t) => t.n).sort((a, b) => a - b)).to.deep.equal([12, 40]);
    expect(app.tasks.map((t) => [t.name, t.queue])).to.deep.equal([
      ["ingest", "webhook:ingest"],
      ["audit", "totals@audit"],
      ["big", "totals@big"],
    ]);
    const status = await app.status();
    expect(status.queues.map((q) => [q.queue, q.consumer, q.producers])).to.deep.equal([
      ["webhook:ingest", "ingest", []],
      ["totals@audit", "audit", ["ingest"]],
      ["totals@big", "big", ["ingest"]],
    ]);
  });

  it("status shows a queue left behind by a change of consumers while it holds messages, with no consumer", async () => {
    const app = newApp();
    app.task({ source: "jobs", name: "first" }, () => undefined);
    app.task({ source: "jobs", name: "second" }, () => undefined);
    await app.start();
    // What a single consumer's queue held before the second consumer was added.
    await app.store.enqueue("jobs", { id: "old", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    const status = await app.status();
    expect(status.queues.map((q) => [q.queue, q.depth, q.consumer])).to.deep.equal([
      ["jobs@first", 0, "first"],
      ["jobs@second", 0, "second"],
      ["jobs", 1, undefined],
    ]);
    expect(status.tasks.map((t) => t.queue)).to.deep.equal(["jobs@first", "jobs@second"]);
  });

  it("an event no task takes is answered 200 {accepted, routed: false}, stored nowhere, and counted as unrouted", async () => {
    const app = newApp("unrouted", { metrics: true });
    const hook = webhook({ path: "/org" });
    const pushes = new Collector();
    app.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, pushes.handler);
    app.task({ source: hook, name: "issues", filter: (e) => kindOf(e) === "issue" }, () => undefined);
    await app.start();
    const reply = await postJson(hook.url, { kind: "star" });
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.include({ accepted: true, routed: false }).and.have.property("id").that.is.a("string");
    expect(await app.store.depth("webhook:pushes")).to.equal(0);
    expect(await app.store.depth("webhook:issues")).to.equal(0);
    const metrics = await (await fetch(`${new URL(hook.url).origin}/metrics`)).text();
    expect(metrics).to.match(/webhook_requests_total\{[^}]*source="org"[^}]*code="unrouted"[^}]*\} 1/);
    await sleep(30);
    expect(pushes.count).to.equal(0);
  });

  it("a filter that throws: 500 filter_failed, no copy stored for any task, one throttled error line naming the task", async () => {
    const lines: LogLine[] = [];
    const app = newApp("throws", { logger: recordingLogger(lines) });
    const hook = webhook({ path: "/org" });
    const fine = new Collector();
    app.task({ source: hook, name: "fine" }, fine.handler);
    app.task({ source: hook, name: "fragile", filter: (e) => (e.body as { deep: { x: number } }).deep.x > 0 }, () => undefined);
    await app.start();
    for (let i = 0; i < 5; i++) {
      const reply = await postJson(hook.url, { kind: "no deep" });
      expect(reply.status).to.equal(500);
      expect(reply.json<{ error: string }>().error).to.equal("filter_failed");
    }
    await sleep(50);
    expect(fine.count).to.equal(0);
    expect(await app.store.depth("webhook:fine")).to.equal(0);
    const logged = lines.filter((l) => /filter failed/.test(l.msg));
    expect(logged).to.have.length(1);
    expect(logged[0].fields).to.include({ task: "fragile", source: "org" });
    // The sender's retry, once the event suits the filter, stores every copy.
    expect((await postJson(hook.url, { kind: "ok", deep: { x: 1 } })).status).to.equal(202);
    await fine.waitFor(1);
  });

  it('refuses reply "result" and ack "processed" on a source feeding several tasks, at start and in check()', async () => {
    for (const options of [{ reply: "result" as const }, { ack: "processed" as const }]) {
      const app = newApp();
      const hook = webhook({ path: "/slash", ...options });
      app.task({ source: hook, name: "one" }, () => undefined);
      app.task({ source: hook, name: "two" }, () => undefined);
      const mode = options.reply ? 'reply "result"' : 'ack "processed"';
      expect(() => app.check()).to.throw(`${mode}`);
      let error: unknown;
      await app.start().catch((e: unknown) => (error = e));
      expect(String(error)).to.contain(`${mode} answers with the task's`).and.contain('2 tasks take its events ("one", "two")');
    }
    // One task with a filter keeps both.
    const app = newApp();
    const hook = webhook({ path: "/slash", reply: "result" });
    app.task({ source: hook, name: "only", filter: (e) => kindOf(e) === "cmd" }, () => ({ text: "done" }));
    await app.start();
    expect((await postJson(hook.url, { kind: "cmd" })).json()).to.deep.equal({ text: "done" });
    expect((await postJson(hook.url, { kind: "other" })).json()).to.include({ accepted: true, routed: false }).and.have.property("id").that.is.a("string");
  });

  it("deduplicates per source: a repeat stores no second copy for any task; a lone task keeps its namespace", async () => {
    const app = newApp();
    const hook = webhook({ path: "/gh", dedupe: "github" });
    const a = new Collector();
    const b = new Collector();
    app.task({ source: hook, name: "a" }, a.handler);
    app.task({ source: hook, name: "b" }, b.handler);
    const lone = webhook({ path: "/lone", dedupe: "github" });
    app.task({ source: lone, name: "solo" }, () => undefined);
    await app.start();
    const first = await postJson(hook.url, { kind: "x" }, { "x-github-delivery": "d-1" });
    const again = await postJson(hook.url, { kind: "x" }, { "x-github-delivery": "d-1" });
    expect(first.status).to.equal(202);
    expect(again.status).to.equal(200);
    expect(again.json()).to.deep.equal({ accepted: true, duplicate: true, id: first.json<{ id: string }>().id });
    await a.waitFor(1);
    await b.waitFor(1);
    await sleep(50);
    expect([a.count, b.count]).to.deep.equal([1, 1]);
    await postJson(lone.url, {}, { "x-github-delivery": "d-2" });
    // The namespaces: the source's name with several tasks, the task's (as before fan-out) with one.
    expect(await app.store.state("dedupe:source:gh").get("d-1")).to.not.equal(undefined);
    expect(await app.store.state("dedupe:solo").get("d-2")).to.not.equal(undefined);
  });
});

describe("fan-out: sources sharing a label", () => {
  const newApp = useApps();

  it("two sources feeding several tasks each on one path (two addresses) would share their deduplication markers: refused at start and in check()", async () => {
    const app = newApp();
    // Stripe sends one event, with one id, to every endpoint registered: here two. Sharing one
    // namespace, the second endpoint's event was answered as a repeat and reached no task.
    const first = webhook({ path: "/stripe", host: "127.0.0.1", dedupe: "stripe" });
    const second = webhook({ path: "/stripe", host: "127.0.0.2", dedupe: "stripe" });
    app.task({ source: first, name: "a1" }, () => undefined);
    app.task({ source: first, name: "a2" }, () => undefined);
    app.task({ source: second, name: "b1" }, () => undefined);
    app.task({ source: second, name: "b2" }, () => undefined);
    expect(() => app.check()).to.throw(/127\.0\.0\.1.*127\.0\.0\.2.*label "stripe"/);
    let refused: unknown;
    await app.start().catch((error: unknown) => (refused = error));
    expect((refused as Error | undefined)?.message).to.match(/label "stripe"/);
  });

  it("one source with several tasks and another with one task on the same path start", async () => {
    const app = newApp();
    const first = webhook({ path: "/stripe", host: "127.0.0.1", dedupe: "stripe" });
    const second = webhook({ path: "/stripe", host: "127.0.0.2", dedupe: "stripe" });
    const a = new Collector();
    const b = new Collector();
    app.task({ source: first, name: "a1" }, a.handler);
    app.task({ source: first, name: "a2" }, () => undefined);
    app.task({ source: second, name: "b" }, b.handler);
    await app.start();
    const event = { id: "evt_1", type: "charge.succeeded" };
    expect((await postJson(first.url, event)).status).to.equal(202);
    expect((await postJson(second.url, event)).status).to.equal(202);
    await a.waitFor(1);
    await b.waitFor(1);
  });
});
