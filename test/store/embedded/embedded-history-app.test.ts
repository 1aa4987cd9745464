import { expect } from "chai";
import type { WebhookEvent } from "../../../src/index";
import { EmbeddedStore } from "../../../src/store/embedded/embedded-store";
import type { HistoryDbs } from "../../../src/store/embedded/history/history-env";
import { decodeBody } from "../../../src/store/embedded/history/history-body";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { StoreFixture } from "./store-fixture";

/** The history's databases, to look at what was written (this test only). */
function dbsOf(store: EmbeddedStore): HistoryDbs {
  return (store.history as unknown as { dbs: HistoryDbs }).dbs;
}

describe("EmbeddedStore history under an app", function () {
  this.timeout(60_000);
  const newApp = useApps();
  const fixture = new StoreFixture("wt-history-app-");
  afterEach(() => fixture.removeDirs());

  it("keeps a real delivery as received, its JSON body written once (as the raw bytes)", async () => {
    const store = new EmbeddedStore({ dir: fixture.tempDir() });
    const app = newApp(undefined, { store });
    const hook = webhook({ path: "/gh" });
    const got = new Collector<WebhookEvent>();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const raw = JSON.stringify({ action: "opened", repository: { full_name: "octo/repo" } });
    const reply = await send(hook.url, { body: raw, headers: { "content-type": "application/json", "x-hub-signature-256": "sha256=abc", "x-github-event": "push" } });
    const id = reply.json<{ id: string }>().id;
    await got.waitFor(1);
    await until(async () => (await app.events.get(id))?.status === "succeeded");
    const event = (await app.events.get(id))!;
    expect((event.payload as WebhookEvent).body).to.deep.equal(JSON.parse(raw));
    expect((event.payload as WebhookEvent).headers["x-hub-signature-256"]).to.equal("[redacted]");
    expect(event.raw!.toString()).to.equal(raw);
    expect(decodeBody(dbsOf(store).timeline.get([event.receivedAt, id])!.b).b, "the parsed body is left out").to.equal(1);
    expect((await app.events.list({ search: "repository.full_name=octo/repo" })).events.map((e) => e.id)).to.deep.equal([id]);
  });

  it("finds an event by the id of its 202 at once, and replays it, before the background writer's batch", async () => {
    const store = new EmbeddedStore({ dir: fixture.tempDir() });
    const app = newApp(undefined, { store });
    const hook = webhook({ path: "/now" });
    const got = new Collector<WebhookEvent>();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const id = (await send(hook.url, { body: "{}", headers: { "content-type": "application/json" } })).json<{ id: string }>().id;
    // The writer batches every second: without the app looking at what it has not written yet, neither call would find it.
    expect((await app.events.get(id))?.id).to.equal(id);
    const replay = await app.events.replay(id);
    expect(replay.replayOf).to.equal(id);
    await got.waitFor(2);
  });

  it("keeps the body as it arrived, written once, when the handler edits it in place before the batch is written", async () => {
    const store = new EmbeddedStore({ dir: fixture.tempDir() });
    const app = newApp(undefined, { store });
    const hook = webhook({ path: "/edit" });
    app.task({ source: hook, name: "edit" }, (_ctx, event: WebhookEvent<{ items: number[]; state: string }>) => {
      event.body.items.sort((a, b) => b - a);
      event.body.state = "changed";
    });
    await app.start();
    const raw = JSON.stringify({ items: [1, 3, 2], state: "new" });
    const id = (await send(hook.url, { body: raw, headers: { "content-type": "application/json" } })).json<{ id: string }>().id;
    await until(async () => (await app.events.get(id))?.status === "succeeded");
    const event = (await app.events.get(id))!;
    expect((event.payload as WebhookEvent).body).to.deep.equal({ items: [1, 3, 2], state: "new" });
    expect(decodeBody(dbsOf(store).timeline.get([event.receivedAt, id])!.b).b, "the parsed body is left out").to.equal(1);
  });

  it("keeps the parsed body too when the source's parser reads the bytes otherwise than by their Content-Type", async () => {
    const store = new EmbeddedStore({ dir: fixture.tempDir() });
    const app = newApp(undefined, { store });
    const hook = webhook({ path: "/as-json", parser: "json" });
    app.task({ source: hook, name: "json" }, () => undefined);
    await app.start();
    const raw = JSON.stringify({ n: 1 });
    const id = (await send(hook.url, { body: raw, headers: { "content-type": "text/plain" } })).json<{ id: string }>().id;
    await until(async () => (await app.events.get(id))?.status === "succeeded");
    const event = (await app.events.get(id))!;
    expect((event.payload as WebhookEvent).body, "as the task got it, not as text").to.deep.equal({ n: 1 });
    expect(decodeBody(dbsOf(store).timeline.get([event.receivedAt, id])!.b).b, "the parsed body is kept").to.equal(undefined);
  });

  it("keeps a pause and the history across a restart of the app: the paused task's events wait, then run on resume", async () => {
    const dir = fixture.tempDir();
    const first = newApp("restarted", { store: new EmbeddedStore({ dir }) });
    const hook1 = webhook({ path: "/p" });
    const got1 = new Collector<WebhookEvent>();
    first.task({ source: hook1, name: "work" }, got1.handler);
    await first.start();
    const before = (await send(hook1.url, { body: "{}", headers: { "content-type": "application/json" } })).json<{ id: string }>().id;
    await got1.waitFor(1);
    await first.pause("work");
    await first.stop();

    const second = newApp("restarted", { store: new EmbeddedStore({ dir }) });
    const hook2 = webhook({ path: "/p" });
    const got2 = new Collector<WebhookEvent>();
    second.task({ source: hook2, name: "work" }, got2.handler);
    await second.start();
    expect(await second.paused()).to.deep.equal(["work"]);
    await until(async () => (await second.events.get(before))?.status === "succeeded");
    const reply = await send(hook2.url, { body: JSON.stringify({ after: true }), headers: { "content-type": "application/json" } });
    expect(reply.status).to.equal(202);
    const waiting = reply.json<{ id: string }>().id;
    await until(async () => (await second.events.get(waiting)) !== undefined);
    await sleep(300);
    expect(got2.events.length, "a paused task runs nothing").to.equal(0);
    expect((await second.events.get(waiting))!.status).to.equal("pending");
    await second.resume("work");
    await got2.waitFor(1);
    await until(async () => (await second.events.get(waiting))?.status === "succeeded");
  });

  it("stays the same size under steady load with a short retainMs: pruning keeps up", async () => {
    const store = new EmbeddedStore({ dir: fixture.tempDir() });
    const app = newApp(undefined, { store, history: { retainMs: 500 } });
    const hook = webhook({ path: "/load" });
    app.task({ source: hook, name: "sink" }, () => undefined);
    await app.start();
    const body = JSON.stringify({ action: "push", padding: "p".repeat(600) });
    const samples: Array<{ round: number; events: number; bytes: number }> = [];
    const started = Date.now();
    let sent = 0;
    // 60 rounds of 10 requests, 50 ms apart (a few seconds: many retention windows), sampled from the 15th on.
    for (let round = 1; round <= 60; round++) {
      await Promise.all(Array.from({ length: 10 }, () => send(hook.url, { body, headers: { "content-type": "application/json" } })));
      sent += 10;
      await sleep(50);
      if (round >= 15 && round % 5 === 0) samples.push({ round, ...(await store.history.size()) });
    }
    const elapsed = Date.now() - started;
    await store.history.flush();
    expect(elapsed, "the load lasted several retention windows").to.be.greaterThan(3 * 500);
    if (process.env.SHOW_SAMPLES) console.log(sent, JSON.stringify(samples));
    const early = samples.slice(0, 3);
    const late = samples.slice(-3);
    const most = (xs: typeof samples, k: "events" | "bytes") => Math.max(...xs.map((s) => s[k]));
    // At most what came in one retention and one batch interval (a batch of up to a second can
    // land just before a sample, ahead of the next prune), far fewer than were sent; and no
    // growth from the first seconds to the last.
    expect(most(late, "events"), JSON.stringify(samples)).to.be.below((sent * (500 + 1_000)) / elapsed);
    expect(most(late, "bytes"), JSON.stringify(samples)).to.be.at.most(most(early, "bytes") * 1.5 + 256 * 1024);
  });
});
