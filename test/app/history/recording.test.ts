import { expect } from "chai";
import { PermanentError, Queue, type HistoryEvent, type WebhookEvent } from "../../../src/index";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { postJson, send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";

const FAST_RETRY = { initialDelayMs: 5, maxDelayMs: 5, factor: 1 };
type Body = { n: number; kind?: string };

/** The event once its history shows every delivery settled as wanted. */
async function settled(get: () => Promise<HistoryEvent | undefined>, done: (e: HistoryEvent) => boolean): Promise<HistoryEvent> {
  let event: HistoryEvent | undefined;
  await until(async () => {
    event = await get();
    return event !== undefined && done(event);
  });
  return event!;
}

describe("event history: recording", () => {
  const newApp = useApps();

  it("keeps an accepted webhook event as received, secrets redacted, with its run", async () => {
    const app = newApp();
    const hook = webhook({ path: "/gh" });
    const got = new Collector<WebhookEvent<Body>>();
    app.task({ source: hook, name: "receive" }, got.handler);
    await app.start();
    const before = Date.now();
    const raw = JSON.stringify({ n: 1, repository: { full_name: "octo/repo" } });
    const reply = await send(hook.url, { body: raw, headers: { "content-type": "application/json", authorization: "Bearer s3cret", "x-hub-signature-256": "sha256=abc", "x-github-event": "push", "x-request-id": "req-77" } });
    expect(reply.status).to.equal(202);
    const id = reply.json<{ id: string }>().id;
    await got.waitFor(1);
    const event = await settled(() => app.events.get(id), (e) => e.status === "succeeded");
    expect(event.id).to.equal(id);
    expect(event.origin).to.deep.equal({ kind: "webhook", source: "gh" });
    expect(event.receivedAt).to.be.within(before - 5, Date.now());
    const payload = event.payload as WebhookEvent;
    expect(payload.body).to.deep.equal({ n: 1, repository: { full_name: "octo/repo" } });
    expect(payload.headers.authorization).to.equal("[redacted]");
    expect(payload.headers["x-hub-signature-256"]).to.equal("[redacted]");
    expect(payload.headers["x-github-event"]).to.equal("push");
    expect(event.raw!.toString()).to.equal(raw);
    // The task itself got the event as sent.
    expect(got.events[0].headers.authorization).to.equal("Bearer s3cret");
    expect(event.deliveries).to.deep.equal([{ task: "receive", queue: "webhook:receive", messageId: id, status: "succeeded", attempts: 1 }]);
    expect(event.runs.length).to.equal(1);
    const [run] = event.runs;
    expect(run).to.include({ task: "receive", attempt: 1, outcome: "success" });
    expect(run.startedAt).to.be.within(before - 5, Date.now());
    expect(run.durationMs).to.be.at.least(0);
    expect(run.error).to.equal(undefined);
    const listed = await app.events.list({ search: "repository.full_name=octo/repo" });
    expect(listed.events.map((e) => e.id)).to.deep.equal([id]);
    expect((await app.events.list({ search: "req-77" })).events.map((e) => e.id)).to.deep.equal([id]);
  });

  it("keeps every run: retries with their errors, a success, a dead letter, a permanent failure", async () => {
    const app = newApp();
    const hook = webhook({ path: "/r" });
    const tries = new Map<number, number>();
    app.task({ source: hook, name: "flaky", retry: { attempts: 3, ...FAST_RETRY } }, (_ctx, event: WebhookEvent<Body>) => {
      const n = event.body.n;
      tries.set(n, (tries.get(n) ?? 0) + 1);
      if (n === 1 && tries.get(n)! < 3) throw new TypeError(`not yet ${tries.get(n)}`);
      if (n === 2) throw new RangeError("always");
      if (n === 3) throw new PermanentError("bad input");
      return undefined;
    });
    await app.start();
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await postJson(hook.url, { n })).json<{ id: string }>().id);
    const recovered = await settled(() => app.events.get(ids[0]), (e) => e.status === "succeeded");
    expect(recovered.runs.map((r) => [r.attempt, r.outcome, r.error?.type, r.error?.message])).to.deep.equal([
      [1, "retry", "TypeError", "not yet 1"],
      [2, "retry", "TypeError", "not yet 2"],
      [3, "success", undefined, undefined],
    ]);
    expect(recovered.runs[0].error!.stack).to.match(/TypeError: not yet 1\n\s+at /);
    expect(recovered.deliveries[0]).to.include({ status: "succeeded", attempts: 3 });
    const dead = await settled(() => app.events.get(ids[1]), (e) => e.status === "dead");
    expect(dead.runs.map((r) => r.outcome)).to.deep.equal(["retry", "retry", "dead_letter"]);
    expect(dead.deliveries[0]).to.include({ status: "dead", attempts: 3, lastError: "always" });
    const permanent = await settled(() => app.events.get(ids[2]), (e) => e.status === "dead");
    expect(permanent.runs.map((r) => [r.outcome, r.error?.type])).to.deep.equal([["dead_letter", "PermanentError"]]);
    expect((await app.events.list({ status: "dead" })).events.map((e) => e.id)).to.deep.equal([ids[2], ids[1]]);
    expect((await app.events.list({ status: "succeeded" })).events.map((e) => e.id)).to.deep.equal([ids[0]]);
  });

  it("shows a failing run as failed while it waits for its retry, and a timed-out run as timeout", async () => {
    const app = newApp();
    const hook = webhook({ path: "/slow" });
    app.task({ source: hook, name: "slow", timeoutMs: 30, retry: { attempts: 5, initialDelayMs: 60_000, maxDelayMs: 60_000, factor: 1 } }, () => sleep(500));
    await app.start();
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    const event = await settled(() => app.events.get(id), (e) => e.runs.length === 1);
    expect(event.status).to.equal("failed");
    expect(event.runs[0]).to.include({ outcome: "timeout", attempt: 1 });
    expect(event.runs[0].error!.type).to.equal("TaskTimeoutError");
    expect(event.deliveries[0].lastError).to.match(/30 ms/);
    expect((await app.events.list({ status: "failed" })).events.map((e) => e.id)).to.deep.equal([id]);
  });

  it("keeps an emitted value as an event of its queue, linked to the event whose run emitted it", async () => {
    const app = newApp();
    const hook = webhook({ path: "/e" });
    const results = new Queue<{ doubled: number }>("results");
    const consumed = new Collector<{ doubled: number }>();
    app.task({ source: hook, name: "double", emit: results }, (_ctx, event: WebhookEvent<Body>) => ({ doubled: event.body.n * 2, headers: { authorization: "Bearer inner" } }));
    app.task({ source: results, name: "store" }, consumed.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 21 })).json<{ id: string }>().id;
    await consumed.waitFor(1);
    const parent = await settled(() => app.events.get(id), (e) => e.children.length === 1);
    const childId = parent.children[0];
    expect(parent.runs[0].emitted).to.deep.equal([childId]);
    expect(childId).to.equal(consumed.received[0].ctx.eventId);
    const child = await settled(() => app.events.get(childId), (e) => e.status === "succeeded");
    expect(child.origin).to.deep.equal({ kind: "queue", queue: "results" });
    expect(child.parentId).to.equal(id);
    expect(child.payload).to.deep.equal({ doubled: 42, headers: { authorization: "[redacted]" } });
    expect(child.deliveries).to.deep.equal([{ task: "store", queue: "results", messageId: childId, status: "succeeded", attempts: 1 }]);
    expect(child.runs.map((r) => [r.task, r.outcome])).to.deep.equal([["store", "success"]]);
    expect((await app.events.list({ search: "doubled=42" })).events.map((e) => e.id)).to.deep.equal([childId]);
    expect((await app.events.list({ task: "store" })).events.map((e) => e.id)).to.deep.equal([childId]);
  });

  it("fans out: one event, a delivery per task, each task's runs under the event's id", async () => {
    const app = newApp();
    const hook = webhook({ path: "/fan" });
    const good = new Collector();
    app.task({ source: hook, name: "good" }, good.handler);
    app.task({ source: hook, name: "bad", retry: { attempts: 2, ...FAST_RETRY } }, () => {
      throw new Error("nope");
    });
    app.task({ source: hook, name: "picky", filter: (e: WebhookEvent) => (e.body as Body).kind === "wanted" }, () => undefined);
    await app.start();
    const id = (await postJson(hook.url, { n: 1, kind: "other" })).json<{ id: string }>().id;
    await good.waitFor(1);
    const event = await settled(() => app.events.get(id), (e) => e.deliveries.every((d) => d.status !== "pending" && d.status !== "failed"));
    expect(event.deliveries.map((d) => [d.task, d.messageId, d.status, d.attempts])).to.deep.equal([
      ["good", `${id}@good`, "succeeded", 1],
      ["bad", `${id}@bad`, "dead", 2],
    ]);
    expect(event.status).to.equal("dead");
    expect(event.runs.map((r) => [r.task, r.outcome]).sort()).to.deep.equal([["bad", "dead_letter"], ["bad", "retry"], ["good", "success"]]);
    expect((await app.events.list({ task: "good", status: "succeeded" })).events.map((e) => e.id)).to.deep.equal([id]);
    expect((await app.events.list({ task: "bad", status: "succeeded" })).events).to.deep.equal([]);
    expect((await app.events.list({ task: "picky" })).events).to.deep.equal([]);
  });

  it("keeps why a run whose result cannot be stored failed", async () => {
    const app = newApp();
    const hook = webhook({ path: "/big" });
    const out = new Queue<{ big: bigint }>("out");
    app.task({ source: hook, name: "bigint", emit: out, retry: { attempts: 1 } }, () => ({ big: 2n ** 70n }));
    app.task({ source: out, name: "never" }, () => undefined);
    await app.start();
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    const event = await settled(() => app.events.get(id), (e) => e.status === "dead");
    expect(event.runs[0].outcome).to.equal("dead_letter");
    expect(event.runs[0].error!.message).to.match(/the task's result cannot be stored/);
    expect(event.children).to.deep.equal([]);
  });

  it("records nothing for a refused request", async () => {
    const app = newApp();
    const hook = webhook({ path: "/json", parser: "json" });
    app.task({ source: hook, name: "json" }, () => undefined);
    await app.start();
    const reply = await send(hook.url, { body: "{not json", headers: { "content-type": "application/json" } });
    expect(reply.status).to.equal(400);
    await sleep(50);
    expect((await app.events.list()).events).to.deep.equal([]);
  });
});

describe("event history: with metrics on", () => {
  const newApp = useApps();

  it("records and pauses through the timed store as well", async () => {
    const app = newApp(undefined, { metrics: true });
    const hook = webhook({ path: "/m" });
    const got = new Collector();
    app.task({ source: hook, name: "m" }, got.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    await got.waitFor(1);
    await until(async () => (await app.events.get(id))?.status === "succeeded");
    await app.pause("m");
    expect(await app.paused()).to.deep.equal(["m"]);
  });
});

describe("event history: what a task does to its event", () => {
  const newApp = useApps();

  it("does not change the event kept: a handler that edits its event in place edits its own copy", async () => {
    const app = newApp();
    const hook = webhook({ path: "/mut" });
    app.task({ source: hook, name: "mutate" }, (_ctx, event: WebhookEvent<{ items: number[]; state: string }>) => {
      event.body.items.sort((a, b) => b - a);
      event.body.state = "changed";
      delete (event.headers as Record<string, string>)["x-trace"];
    });
    await app.start();
    const id = (await postJson(hook.url, { items: [1, 3, 2], state: "new" }, { "x-trace": "t-1" })).json<{ id: string }>().id;
    const event = await settled(() => app.events.get(id), (e) => e.status === "succeeded");
    const payload = event.payload as WebhookEvent<{ items: number[]; state: string }>;
    expect(payload.body).to.deep.equal({ items: [1, 3, 2], state: "new" });
    expect(payload.headers["x-trace"]).to.equal("t-1");
  });
});
