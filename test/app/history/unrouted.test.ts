import { expect } from "chai";
import { CoreApp, MemoryStore, ReplayError, WebhookSource, type CoreAppOptions, type WebhookEvent } from "../../../src/index";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { recordingLogger, rejection, until, type LogLine } from "../../helpers/wait";
import { ENGINES, useEngineApps, type Engine } from "../../helpers/engine-apps";

type Kind = { kind: string; n?: number };
const kindOf = (e: WebhookEvent) => (e.body as Kind).kind;
const UNROUTED = { accepted: true, routed: false };

/** The first value `get` gives that is not undefined, within 5 s. */
async function eventually<T>(get: () => Promise<T | undefined>): Promise<T> {
  let value: T | undefined;
  await until(async () => (value = await get()) !== undefined);
  return value!;
}

/** The app's unrouted events' ids, once there are `count` of them. */
async function unroutedIds(app: CoreApp, count: number): Promise<string[]> {
  return eventually(async () => {
    const ids = (await app.events.list({ status: "unrouted" })).events.map((e) => e.id);
    return ids.length === count ? ids : undefined;
  });
}

describe("event history: unrouted events (no task takes them)", function () {
  this.timeout(30_000);
  /** Apps of one engine share its data: the same directory, the same schema, or (memory) one store instance. */
  const appOn = useEngineApps("unrouted");
  const engineOf = (engine: Engine) => (name: string, options?: CoreAppOptions) => appOn(engine, name, options);

  for (const engine of ENGINES) {
    describe(engine, () => {
      it("keeps an event no task takes as unrouted: 200 unrouted as before, then listed and shown with its headers (redacted) and body", async () => {
        const app = engineOf(engine)("keeps");
        const hook = webhook({ path: "/org" });
        const pushes = new Collector();
        app.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, pushes.handler);
        await app.start();
        const taken = await postJson(hook.url, { kind: "push" });
        const reply = await postJson(hook.url, { kind: "star", n: 3 }, { authorization: "Bearer s3cret", "x-hub-signature-256": "sha256=abc", "x-request-id": "req-7" });
        expect(reply.status).to.equal(200);
        expect(reply.json()).to.include(UNROUTED);
        await pushes.waitFor(1);
        const [id] = await unroutedIds(app, 1);
        // The answer names the event as the history keeps it.
        expect((reply.json() as { id: string }).id).to.equal(id);
        const [summary] = (await app.events.list({ status: "unrouted" })).events;
        expect(summary.id).to.equal(id);
        expect(summary.status).to.equal("unrouted");
        expect(summary.deliveries).to.deep.equal([]);
        expect(summary.origin).to.deep.equal({ kind: "webhook", source: "org" });
        const event = (await app.events.get(id))!;
        const payload = event.payload as WebhookEvent;
        expect(payload.body).to.deep.equal({ kind: "star", n: 3 });
        expect(payload.headers.authorization).to.equal("[redacted]");
        expect(payload.headers["x-hub-signature-256"]).to.equal("[redacted]");
        expect(payload.headers["x-request-id"]).to.equal("req-7");
        expect(event.raw?.toString()).to.equal(JSON.stringify({ kind: "star", n: 3 }));
        expect(event.runs).to.deep.equal([]);
        // Listed with the others, found by its header, not by a task.
        const takenId = taken.json<{ id: string }>().id;
        expect((await app.events.list({})).events.map((e) => e.id)).to.deep.equal([summary.id, takenId]);
        expect((await app.events.list({ search: "req-7" })).events.map((e) => e.id)).to.deep.equal([summary.id]);
        expect((await app.events.list({ task: "pushes" })).events.map((e) => e.id)).to.deep.equal([takenId]);
        expect((await app.events.list({ status: "unrouted", task: "pushes" })).events).to.deep.equal([]);
        // No queue holds it.
        expect(await app.store.depth("webhook:pushes")).to.equal(0);
      });

      it("a task added later takes it by a replay, routed by its filter as ingest would, and runs it once", async () => {
        const make = engineOf(engine);
        const first = make("before");
        const hook = webhook({ path: "/org" });
        first.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, () => undefined);
        await first.start();
        const reply = await postJson(hook.url, { kind: "star", n: 1 });
        expect(reply.json()).to.include(UNROUTED);
        const [id] = await unroutedIds(first, 1);
        // Memory and embedded: the app is deployed again with the new task. PostgreSQL: a second
        // app on the same schema, while the first still runs.
        if (engine !== "postgres") await first.stop();
        const second = make("after");
        const hook2 = webhook({ path: "/org" });
        const pushes = new Collector();
        const stars = new Collector();
        const issues = new Collector();
        second.task({ source: hook2, name: "pushes", filter: (e) => kindOf(e) === "push" }, pushes.handler);
        second.task({ source: hook2, name: "stars", filter: (e) => kindOf(e) === "star" }, stars.handler);
        second.task({ source: hook2, name: "issues", filter: (e) => kindOf(e) === "issue" }, issues.handler);
        await second.start();
        expect((await second.events.list({ status: "unrouted" })).events.map((e) => e.id)).to.deep.equal([id]);
        const replay = await second.events.replay(id);
        expect(replay.replayOf).to.equal(id);
        expect(replay.tasks).to.deep.equal(["stars"]);
        await stars.waitFor(1);
        expect(stars.events[0].body).to.deep.equal({ kind: "star", n: 1 });
        expect(stars.received[0].ctx.attempt).to.equal(1);
        await until(async () => (await second.events.get(replay.id))?.status === "succeeded");
        const replayed = (await second.events.get(replay.id))!;
        expect(replayed.deliveries.map((d) => d.task)).to.deep.equal(["stars"]);
        expect(replayed.replayOf).to.equal(id);
        // The original stays what it was, linked to its replay; only its replay is listed as routed.
        const original = (await second.events.get(id))!;
        expect(original.status).to.equal("unrouted");
        expect(original.replays).to.deep.equal([replay.id]);
        expect((await second.events.list({ status: "unrouted" })).events.map((e) => e.id)).to.deep.equal([id]);
        await sleep(100);
        expect(stars.count).to.equal(1);
        expect(pushes.count).to.equal(0);
        expect(issues.count).to.equal(0);
      });
    });
  }

  describe("replay when still no task takes it", () => {
    const newApp = useApps();

    it("refuses one event, saying why; { task } sends it to that task; a task of another source is refused", async () => {
      const app = newApp("still");
      const hook = webhook({ path: "/org" });
      const other = webhook({ path: "/other" });
      const pushes = new Collector();
      const elsewhere = new Collector();
      app.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, pushes.handler);
      app.task({ source: other, name: "elsewhere" }, elsewhere.handler);
      await app.start();
      const id = await unroutedId(app, hook.url, { kind: "star" });
      let err = await rejection(app.events.replay(id));
      expect(err).to.be.instanceOf(ReplayError);
      expect(err.message).to.equal(
        `cannot replay event "${id}": it was unrouted (no task took it), and none of the tasks on source "org" ("pushes") takes it now; add a task whose on and filter take it, or name one with { task }`,
      );
      err = await rejection(app.events.replay(id, { task: "elsewhere" }));
      expect(err.message).to.match(/came from source "org", and the task takes the events of source "other"/);
      const forced = await app.events.replay(id, { task: "pushes" });
      expect(forced.tasks).to.deep.equal(["pushes"]);
      await pushes.waitFor(1);
      expect(pushes.events[0].body).to.deep.equal({ kind: "star" });
      await sleep(50);
      expect(elsewhere.count).to.equal(0);
    });

    it("refuses one event when no task of the app is on its source any more", async () => {
      const store = new MemoryStore();
      const before = newApp("before", { store });
      const hook = webhook({ path: "/org" });
      before.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, () => undefined);
      await before.start();
      const id = await unroutedId(before, hook.url, { kind: "star" });
      await before.stop();
      const after = newApp("after", { store });
      after.task({ source: webhook({ path: "/other" }), name: "elsewhere" }, () => undefined);
      await after.start();
      const err = await rejection(after.events.replay(id));
      expect(err.message).to.equal(`cannot replay event "${id}": it was unrouted (no task took it), and this app has no task on source "org"; add a task whose on and filter take it, or name one with { task }`);
    });

    it("a replay by filter queues those a task takes now and skips the others, logged", async () => {
      const lines: LogLine[] = [];
      const app = newApp("bulk", { logger: recordingLogger(lines) });
      const hook = webhook({ path: "/org" });
      const stars = new Collector();
      // Its filter as it is now: it takes stars only once turned on (as after a deploy that changed it).
      let starsOn = false;
      app.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, () => undefined);
      app.task({ source: hook, name: "stars", filter: (e) => starsOn && kindOf(e) === "star" }, stars.handler);
      await app.start();
      const starId = await unroutedId(app, hook.url, { kind: "star" });
      const watchId = await unroutedId(app, hook.url, { kind: "watch" });
      starsOn = true;
      expect(await app.events.replay({ status: "unrouted" }, { dryRun: true })).to.deep.equal({ matched: 2, queued: 0, dryRun: true });
      const result = await app.events.replay({ status: "unrouted" });
      expect(result).to.deep.equal({ matched: 2, queued: 1, dryRun: false });
      await stars.waitFor(1);
      expect(stars.events[0].body).to.deep.equal({ kind: "star" });
      expect((await app.events.get(starId))!.replays).to.have.length(1);
      expect((await app.events.get(watchId))!.replays).to.deep.equal([]);
      const skipped = lines.filter((l) => l.msg === "replay: this event is skipped");
      expect(skipped.map((l) => l.fields?.eventId)).to.deep.equal([watchId]);
      await sleep(50);
      expect(stars.count).to.equal(1);
    });

    it("a filter that throws on the replayed event refuses the replay, naming the task", async () => {
      const app = newApp("throws");
      const hook = webhook({ path: "/org" });
      let armed = false;
      app.task({ source: hook, name: "fragile", filter: (e) => (armed ? (e.body as { deep: { x: number } }).deep.x > 0 : false) }, () => undefined);
      await app.start();
      const id = await unroutedId(app, hook.url, { kind: "flat" });
      armed = true;
      const err = await rejection(app.events.replay(id));
      expect(err).to.be.instanceOf(ReplayError);
      expect(err.message).to.match(new RegExp(`cannot replay event "${id}": task "fragile": filter threw`));
    });
  });

  it("history off: an unrouted event is answered as before, and nothing is noted", async () => {
    const app = appOn("memory", "off", { history: false });
    const hook = webhook({ path: "/org" });
    app.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, () => undefined);
    await app.start();
    const reply = await postJson(hook.url, { kind: "star" });
    expect(reply.status).to.equal(200);
    expect(reply.json()).to.include(UNROUTED);
    await sleep(30);
    const history = app.store.history!;
    await history.flush();
    expect((await history.size()).events).to.equal(0);
  });

  it("embedded, history off: nothing is noted in the store's history", async () => {
    const app = appOn("embedded", "off-embedded", { history: false });
    const hook = new WebhookSource({ path: "/org", host: "127.0.0.1", port: 0 });
    app.task({ source: hook, name: "pushes", filter: (e) => kindOf(e) === "push" }, () => undefined);
    await app.start();
    expect((await postJson(hook.url, { kind: "star" })).json()).to.include(UNROUTED);
    await sleep(30);
    const history = app.store.history!;
    await history.flush();
    expect((await history.list({})).events).to.deep.equal([]);
  });
});

/** Posts an event no task takes; its id, once the history has it. */
async function unroutedId(app: CoreApp, url: string, body: unknown): Promise<string> {
  const before = new Set((await app.events.list({ status: "unrouted" })).events.map((e) => e.id));
  const reply = await postJson(url, body);
  expect(reply.json()).to.include(UNROUTED);
  return eventually(async () => (await app.events.list({ status: "unrouted" })).events.find((e) => !before.has(e.id))?.id);
}
