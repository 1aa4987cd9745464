import { expect } from "chai";
import { MemoryStore, PermanentError, Queue, ReplayError, type TaskContext, type WebhookEvent } from "../../../src/index";
import { Collector, useApps, webhook } from "../../helpers/app";
import { postJson, send } from "../../helpers/http-client";
import { useEngineApps } from "../../helpers/engine-apps";
import { recordingLogger, rejection, until, type LogLine } from "../../helpers/wait";

type Body = { n: number };

describe("event history: replay", () => {
  const newApp = useApps();

  it("replays one event: a new id linked both ways, a fresh first attempt, the same body", async () => {
    const app = newApp();
    const hook = webhook({ path: "/one" });
    const got = new Collector<WebhookEvent<Body>>();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 7 })).json<{ id: string }>().id;
    await got.waitFor(1);
    const replay = await app.events.replay(id);
    expect(replay.replayOf).to.equal(id);
    expect(replay.tasks).to.deep.equal(["receive"]);
    expect(replay.id).to.not.equal(id);
    await got.waitFor(2);
    const [first, second] = got.received;
    expect(second.event.body).to.deep.equal(first.event.body);
    expect(second.ctx.eventId).to.equal(replay.id);
    expect(second.ctx.attempt).to.equal(1);
    expect(second.ctx.rawBody.toString()).to.equal(first.ctx.rawBody.toString());
    expect((await app.events.get(id))!.replays).to.deep.equal([replay.id]);
    await until(async () => (await app.events.get(replay.id))?.status === "succeeded");
    const replayed = (await app.events.get(replay.id))!;
    expect(replayed.replayOf).to.equal(id);
    expect(replayed.origin).to.deep.equal({ kind: "webhook", source: "one" });
    // A replay of a replay.
    const again = await app.events.replay(replay.id);
    await got.waitFor(3);
    expect((await app.events.get(replay.id))!.replays).to.deep.equal([again.id]);
    expect(got.count).to.equal(3);
  });

  it("gives a replay the task's concurrency and rate keys, as an arriving event gets them", async () => {
    const app = newApp();
    const hook = webhook({ path: "/limited" });
    const got = new Collector<WebhookEvent<{ shop: string }>>();
    app.task<WebhookEvent<{ shop: string }>>(
      { source: hook, name: "limited", concurrency: { limit: 1, key: (event) => event.body.shop }, rateLimit: { limit: 100, periodMs: 1_000, key: (event) => `r-${event.body.shop}` } },
      got.handler,
    );
    await app.start();
    const id = (await postJson(hook.url, { shop: "a" })).json<{ id: string }>().id;
    await got.waitFor(1);
    await app.pause("limited");
    const replay = await app.events.replay(id);
    const [queue] = await app.store.queueNames();
    const [queued] = await app.store.claim(queue!, 10);
    expect(queued).to.deep.include({ id: replay.id, concurrencyKey: "a", rateKey: "r-a" });
  });

  it("replays a fanned-out event to every task, or to the one named", async () => {
    const app = newApp();
    const hook = webhook({ path: "/fan" });
    const a = new Collector();
    const b = new Collector();
    app.task({ source: hook, name: "a" }, a.handler);
    app.task({ source: hook, name: "b" }, b.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    await a.waitFor(1);
    await b.waitFor(1);
    const all = await app.events.replay(id);
    expect(all.tasks).to.deep.equal(["a", "b"]);
    await a.waitFor(2);
    await b.waitFor(2);
    expect(a.received[1].ctx.eventId).to.equal(`${all.id}@a`);
    const onlyB = await app.events.replay(id, { task: "b" });
    expect(onlyB.tasks).to.deep.equal(["b"]);
    await b.waitFor(3);
    await until(async () => (await app.events.get(onlyB.id))?.status === "succeeded");
    expect(a.count).to.equal(2);
    expect((await app.events.get(onlyB.id))!.deliveries.map((d) => [d.task, d.messageId, d.status])).to.deep.equal([["b", `${onlyB.id}@b`, "succeeded"]]);
    // Oldest first; two replays within one millisecond are ordered by id, so compare as a set.
    expect((await app.events.get(id))!.replays).to.have.members([all.id, onlyB.id]);
  });

  it("replays an emitted value to its queue's task", async () => {
    const app = newApp();
    const hook = webhook({ path: "/emit" });
    const out = new Queue<{ v: number }>("out");
    const consumed = new Collector<{ v: number }>();
    app.task({ source: hook, name: "make", emit: out }, (_ctx, e: WebhookEvent<Body>) => ({ v: e.body.n }));
    app.task({ source: out, name: "use" }, consumed.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 5 })).json<{ id: string }>().id;
    await consumed.waitFor(1);
    await until(async () => ((await app.events.get(id))?.children.length ?? 0) === 1);
    const childId = (await app.events.get(id))!.children[0];
    const replay = await app.events.replay(childId);
    expect(replay.tasks).to.deep.equal(["use"]);
    await consumed.waitFor(2);
    expect(consumed.events[1]).to.deep.equal({ v: 5 });
    const err = await rejection(app.events.replay(childId, { task: "make" }));
    expect(err.message).to.match(/came from queue "out", and the task takes the events of source "emit"/);
  });

  it("refuses clearly: an unknown id, an unknown task, a payload not kept, bad options", async () => {
    const store = new MemoryStore();
    const app = newApp(undefined, { store });
    const hook = webhook({ path: "/x" });
    const got = new Collector();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    await got.waitFor(1);
    let err = await rejection(app.events.replay("no-such-id"));
    expect(err).to.be.instanceOf(ReplayError);
    expect(err.message).to.match(/"no-such-id": it is not in the history/);
    err = await rejection(app.events.replay(id, { task: "recieve" }));
    expect(err.message).to.match(/no task "recieve" in this app \(did you mean "receive"\?\)/);
    err = await rejection(app.events.replay({ source: "x" }, { task: "nope" }));
    expect(err.message).to.match(/no task "nope"/);
    store.history.noteEvent({ id: "bare", origin: { kind: "webhook", source: "x" }, receivedAt: Date.now(), deliveries: [{ task: "receive", queue: "webhook:receive", messageId: "bare" }], payload: undefined });
    err = await rejection(app.events.replay("bare"));
    expect(err.message).to.match(/cannot replay event "bare": its payload was not kept in the history/);
    err = await rejection(app.events.replay(id, { dryRun: true } as never));
    expect(err.message).to.match(/unknown option "dryRun" \(dryRun is for a replay by filter\)/);
    err = await rejection(app.events.replay({ source: "x" }, { ratePerSecond: 0 }));
    expect(err.message).to.match(/ratePerSecond must be a number > 0/);
    err = await rejection(app.events.replay({ source: "x" }, { onReplayed: "discard" } as never));
    expect(err.message).to.match(/onReplayed must be a function/);
    err = await rejection(app.events.replay(id, { onReplayed: () => undefined } as never));
    expect(err.message).to.match(/unknown option "onReplayed" \(onReplayed is for a replay by filter\)/);
    err = await rejection(app.events.replay({ status: "broken" as never }));
    expect(err.message).to.match(/status must be one of pending, succeeded, failed, dead/);
    err = await rejection(app.events.replay({ staus: "dead" } as never));
    expect(err.message).to.match(/"staus" is not a history filter \(did you mean "status"\?\)/);
    err = await rejection(app.events.replay({ limit: 5 } as never));
    expect(err.message).to.match(/leave out limit/);
    expect(got.count).to.equal(1);
  });

  it("refuses an event its queue cannot hold again (a body deeper than a store writes, let in by a raised maxBodyDepth), and a replay by filter skips it and goes on", async () => {
    const app = newApp();
    const hook = webhook({ path: "/deep", maxBodyDepth: 2_000 });
    const got = new Collector();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const deep = (await send(hook.url, { body: "[".repeat(1_000) + "]".repeat(1_000), headers: { "content-type": "application/json" } })).json<{ id: string }>().id;
    await postJson(hook.url, { n: 1 });
    await got.waitFor(2);
    await until(async () => (await app.events.list({ status: "succeeded" })).events.length === 2);
    const err = await rejection(app.events.replay(deep));
    expect(err).to.be.instanceOf(ReplayError);
    expect(err.message).to.match(/^cannot replay event ".+": its payload cannot be stored again: payload\.body.*nested deeper than 512 levels/);
    expect(await app.events.replay({ source: "deep" }, { ratePerSecond: 1_000 })).to.deep.equal({ matched: 2, queued: 1, dryRun: false });
    await got.waitFor(3);
    expect((got.events[2].body as Body).n).to.equal(1);
  });

  it("replays by filter in the order the events were received, to the named task only", async () => {
    const app = newApp();
    const hook = webhook({ path: "/order" });
    const first = new Collector<WebhookEvent<Body>>();
    const second = new Collector<WebhookEvent<Body>>();
    app.task({ source: hook, name: "first", concurrency: 1 }, first.handler);
    app.task({ source: hook, name: "second", concurrency: 1 }, second.handler);
    await app.start();
    for (let n = 0; n < 5; n++) {
      await postJson(hook.url, { n });
      // Events of one millisecond are ordered by id: a tick between them keeps arrival order.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await first.waitFor(5);
    await second.waitFor(5);
    const result = await app.events.replay({ source: "order" }, { task: "second", ratePerSecond: 1_000 });
    expect(result).to.deep.equal({ matched: 5, queued: 5, dryRun: false });
    await second.waitFor(10);
    expect(second.events.slice(5).map((e) => e.body.n)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(first.count).to.equal(5);
  });

  it("tells onReplayed of each replay of a bulk replay, in order, and goes on when it throws", async () => {
    const lines: LogLine[] = [];
    const app = newApp(undefined, { logger: recordingLogger(lines) });
    const hook = webhook({ path: "/told" });
    const got = new Collector<WebhookEvent<Body>>();
    app.task({ source: hook, name: "told" }, got.handler);
    await app.start();
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      ids.push((await postJson(hook.url, { n })).json<{ id: string }>().id);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await got.waitFor(3);
    const told: Array<[string, string, readonly string[]]> = [];
    const result = await app.events.replay(
      { source: "told" },
      {
        ratePerSecond: 1_000,
        onReplayed: async (original, replay) => {
          told.push([original.id, replay.replayOf, replay.tasks]);
          if (told.length === 1) throw new Error("the hook failed");
        },
      },
    );
    expect(result).to.deep.equal({ matched: 3, queued: 3, dryRun: false });
    expect(told).to.deep.equal(ids.map((id) => [id, id, ["told"]]));
    expect(lines.filter((l) => l.msg.includes("onReplayed threw"))).to.have.length(1);
    await got.waitFor(6);
  });

  it("replays by status only the deliveries in that status: a task that succeeded on a fanned-out event does not run it again", async () => {
    const app = newApp();
    const hook = webhook({ path: "/fanned" });
    const notify = new Collector<WebhookEvent<Body>>();
    let broken = true;
    const record = new Collector<WebhookEvent<Body>>(() => {
      if (broken) throw new PermanentError("record down");
    });
    app.task({ source: hook, name: "notify" }, notify.handler);
    app.task({ source: hook, name: "record" }, record.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    await until(async () => (await app.events.get(id))?.status === "dead");
    expect(notify.count).to.equal(1);
    broken = false;
    expect(await app.events.replay({ status: "dead" }, { ratePerSecond: 1_000 })).to.deep.equal({ matched: 1, queued: 1, dryRun: false });
    await record.waitFor(2);
    const replayId = (await app.events.get(id))!.replays[0];
    await until(async () => (await app.events.get(replayId))?.status === "succeeded");
    expect((await app.events.get(replayId))!.deliveries.map((d) => d.task)).to.deep.equal(["record"]);
    expect(notify.count).to.equal(1);
  });

  it("replays by status dead only the dead letters still held: one replayed or discarded since is skipped, not run again", async () => {
    const app = newApp();
    const hook = webhook({ path: "/charges" });
    let broken = true;
    const charge = new Collector<WebhookEvent<Body>>(() => {
      if (broken) throw new PermanentError("card service down");
    });
    app.task({ source: hook, name: "charge" }, charge.handler);
    await app.start();
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await postJson(hook.url, { n })).json<{ id: string }>().id);
    await until(async () => (await Promise.all(ids.map((id) => app.events.get(id)))).every((e) => e?.status === "dead"));
    broken = false;
    // Handled as the console does it: one replayed as a new event (its letter discarded), one discarded.
    // The originals stay dead in the history: that is what happened to them.
    await app.events.replay(ids[0]);
    expect(await app.deadLetters.purge({ id: ids[0] })).to.equal(1);
    expect(await app.deadLetters.purge({ id: ids[1] })).to.equal(1);
    await charge.waitFor(4);
    expect(await app.events.replay({ status: "dead" }, { dryRun: true })).to.deep.equal({ matched: 3, queued: 0, dryRun: true });
    expect(await app.events.replay({ status: "dead" }, { ratePerSecond: 1_000 })).to.deep.equal({ matched: 3, queued: 1, dryRun: false });
    await charge.waitFor(5);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(charge.events.map((e) => e.body.n)).to.deep.equal([1, 2, 3, 1, 3]);
    expect((await app.events.get(ids[1]))!.replays).to.deep.equal([]);
  });

  it("replays 1,000 events by filter: a dry run counts, then paced replays, each event once more and nothing else", async function () {
    this.timeout(60_000);
    const app = newApp(undefined, { history: { maxEvents: 5_000 } });
    const hook = webhook({ path: "/bulk" });
    const other = webhook({ path: "/other" });
    const runs = new Map<number, number>();
    let otherRuns = 0;
    let fixed = false;
    app.task({ source: hook, name: "bulk", concurrency: 32 }, (_ctx: TaskContext, e: WebhookEvent<Body>) => {
      runs.set(e.body.n, (runs.get(e.body.n) ?? 0) + 1);
      // A bug that fails one event in a hundred for good, fixed before the replay.
      if (!fixed && e.body.n % 100 === 0) throw new PermanentError("bug");
    });
    app.task({ source: other, name: "other" }, () => void otherRuns++);
    await app.start();
    for (let start = 0; start < 1_000; start += 50) {
      const batch = [];
      for (let n = start; n < start + 50; n++) batch.push(postJson(hook.url, { n }));
      for (const reply of await Promise.all(batch)) expect(reply.status).to.equal(202);
    }
    await postJson(other.url, { n: -1 });
    const total = () => [...runs.values()].reduce((a, b) => a + b, 0);
    await until(() => total() === 1_000 && otherRuns === 1, 20_000);
    await until(async () => (await app.events.list({ source: "bulk", status: "pending" })).events.length === 0);

    const dry = await app.events.replay({ source: "bulk" }, { dryRun: true });
    expect(dry).to.deep.equal({ matched: 1_000, queued: 0, dryRun: true });
    const deadDry = await app.events.replay({ status: "dead" }, { dryRun: true });
    expect(deadDry).to.deep.equal({ matched: 10, queued: 0, dryRun: true });
    await new Promise((r) => setTimeout(r, 100));
    expect(total()).to.equal(1_000);

    // The fix is deployed: the dead ones first.
    fixed = true;
    const firstDeliveries = Date.now();
    const dead = await app.events.replay({ status: "dead" });
    expect(dead).to.deep.equal({ matched: 10, queued: 10, dryRun: false });
    await until(() => total() === 1_010);

    // Then all 1,000 first deliveries (the replays just made are events of the source too), paced
    // at 500 a second: no sooner than about two seconds.
    const started = Date.now();
    const all = await app.events.replay({ source: "bulk", until: firstDeliveries }, { ratePerSecond: 500 });
    const took = Date.now() - started;
    expect(all).to.deep.equal({ matched: 1_000, queued: 1_000, dryRun: false });
    expect(took).to.be.at.least(1_900);
    await until(() => total() === 2_010, 20_000);
    await new Promise((r) => setTimeout(r, 200));
    for (let n = 0; n < 1_000; n++) expect(runs.get(n), `event ${n}`).to.equal(n % 100 === 0 ? 3 : 2);
    expect(otherRuns).to.equal(1);
    expect(total()).to.equal(2_010);
  });

  describe("the body and query exactly as received", function () {
    this.timeout(30_000);
    const appOn = useEngineApps("replay-exact");
    // JSON.parse makes an own "__proto__" key and a string holding a lone surrogate from these escapes.
    const raw = '{"__proto__":{"x":1},"a":"\\ud800","b":["\\udc00z"]}';
    const shape = (event: WebhookEvent) => {
      const body = event.body as Record<string, unknown>;
      return {
        bodyKeys: Object.keys(body),
        bodyPrototype: Object.getPrototypeOf(body) === Object.prototype,
        proto: Object.getOwnPropertyDescriptor(body, "__proto__")?.value,
        a: body.a,
        b: body.b,
        queryKeys: Object.keys(event.query),
        queryProto: Object.getOwnPropertyDescriptor(event.query, "__proto__")?.value,
      };
    };
    const expected = { bodyKeys: ["__proto__", "a", "b"], bodyPrototype: true, proto: { x: 1 }, a: "\ud800", b: ["\udc00z"], queryKeys: ["__proto__"], queryProto: "1" };

    for (const engine of ["memory", "embedded"] as const) {
      it(`${engine}: keeps a "__proto__" key and lone surrogates in the history and in the replay`, async () => {
        const app = appOn(engine, `exact-${engine}`);
        const hook = webhook({ path: "/exact" });
        const got = new Collector<WebhookEvent>();
        app.task({ source: hook, name: "receive" }, got.handler);
        await app.start();
        const id = (await send(`${hook.url}?__proto__=1`, { body: raw, headers: { "content-type": "application/json" } })).json<{ id: string }>().id;
        await got.waitFor(1);
        expect(shape(got.received[0].event), "as received").to.deep.equal(expected);
        await until(async () => (await app.events.get(id))?.status === "succeeded");
        expect(shape((await app.events.get(id))!.payload as WebhookEvent), "in the history").to.deep.equal(expected);
        await app.events.replay(id);
        await got.waitFor(2);
        expect(shape(got.received[1].event), "replayed").to.deep.equal(expected);
      });
    }
  });
});

