import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore, type QueuedMessage, type TaskContext, type WebhookEvent } from "../../../src/index";
import { Collector, gate, sleep, startWebhook, useApps, webhook } from "../../helpers/app";
import { postJson, send } from "../../helpers/http-client";

describe("WebhookSource: tasks behind the endpoint", () => {
  const makeApp = useApps();

  it("retries a task that throws with backoff, then keeps the event as a dead letter that can be replayed", async () => {
    const attempts: Array<{ attempt: number; id: string; at: number }> = [];
    let fail = true;
    const { app, source, events } = await startWebhook(makeApp, {}, {
      retry: { attempts: 3, initialDelayMs: 20 },
      reply: (ctx: TaskContext) => {
        attempts.push({ attempt: ctx.attempt, id: ctx.eventId, at: Date.now() });
        if (fail) throw new Error(`boom ${ctx.attempt}`);
        return "ok";
      },
    });
    const reply = await postJson(source.url, { order: 1 });
    expect(reply.status).to.equal(202);
    const id = reply.json().id;
    await events.waitFor(3);
    let letters = await app.deadLetters.list();
    for (let i = 0; i < 50 && letters.length === 0; i++) {
      await sleep(10);
      letters = await app.deadLetters.list();
    }
    expect(attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3]);
    expect(new Set(attempts.map((a) => a.id))).to.deep.equal(new Set([id]));
    // Backoff: about 20 ms, then about 40 ms (±10% jitter).
    expect(attempts[1].at - attempts[0].at).to.be.at.least(15);
    expect(attempts[2].at - attempts[1].at).to.be.at.least(30);
    expect(events.events.every((e) => JSON.stringify(e.body) === '{"order":1}')).to.equal(true);
    expect(letters).to.have.length(1);
    const [letter] = letters;
    expect(letter.message.id).to.equal(id);
    expect(letter.attempts).to.equal(3);
    expect(letter.error).to.equal("boom 3");
    expect(letter.task).to.equal("receive");
    expect((letter.message.payload as WebhookEvent).body).to.deep.equal({ order: 1 });
    expect(Buffer.from(letter.message.raw!).toString()).to.equal('{"order":1}');
    await sleep(100);
    expect(events.count, "no delivery after the last attempt").to.equal(3);

    fail = false;
    expect(await app.deadLetters.replay(id)).to.equal(true);
    await events.waitFor(4);
    expect(attempts[3]).to.include({ attempt: 1, id });
    await sleep(20);
    expect(await app.deadLetters.list()).to.have.length(0);
  });

  it("emits through a chain of three tasks; an undefined return is not emitted, null is", async () => {
    const app = makeApp();
    const source = webhook();
    const first = new Collector<WebhookEvent>((_ctx, event) => {
      const body = event.body as { n: number; skip?: boolean; nil?: boolean };
      if (body.skip) return undefined;
      if (body.nil) return null;
      return { n: body.n, step: 1 };
    });
    const second = new Collector<{ n: number; step: number } | null>((_ctx, value) => (value === null ? "was null" : { ...value, step: value.step + 1 }));
    const third = new Collector<unknown>(() => undefined);
    app.task({ source, name: "first", emit: "q1" }, first.handler);
    app.task({ source: "q1", name: "second", emit: "q2" }, second.handler);
    app.task({ source: "q2", name: "third" }, third.handler);
    await app.start();
    expect((await postJson(source.url, { n: 1 })).status).to.equal(202);
    expect((await postJson(source.url, { n: 2, skip: true })).status).to.equal(202);
    expect((await postJson(source.url, { n: 3 })).status).to.equal(202);
    expect((await postJson(source.url, { n: 4, nil: true })).status).to.equal(202);
    await first.waitFor(4);
    await third.waitFor(3);
    await sleep(50);
    expect(second.count).to.equal(3);
    expect(third.count).to.equal(3);
    const finals = third.events.slice().sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(finals).to.deep.equal(["was null", { n: 1, step: 2 }, { n: 3, step: 2 }].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))));
    // A queue message has no raw request bytes.
    expect(third.received[0].ctx.rawBody.length).to.equal(0);
  });

  it("takes 200 requests in flight at once: each answered 202 and each producing exactly one event", async function () {
    this.timeout(10_000);
    const { source, events } = await startWebhook(makeApp);
    const replies = await Promise.all(Array.from({ length: 200 }, (_, n) => postJson(source.url, { n })));
    expect(replies.map((r) => r.status)).to.deep.equal(Array(200).fill(202));
    const ids = replies.map((r) => r.json().id as string);
    expect(new Set(ids).size).to.equal(200);
    await events.waitFor(200, 5_000);
    await sleep(50);
    expect(events.count).to.equal(200);
    expect(events.received.map((r) => r.ctx.eventId).sort()).to.deep.equal([...ids].sort());
    const seen = events.events.map((e) => (e.body as { n: number }).n).sort((a, b) => a - b);
    expect(seen).to.deep.equal(Array.from({ length: 200 }, (_, n) => n));
    // The id a caller got belongs to the event made from its own body.
    const byId = new Map(events.received.map((r) => [r.ctx.eventId, (r.event.body as { n: number }).n]));
    ids.forEach((id, n) => expect(byId.get(id)).to.equal(n));
  });

  it("answers 503 with Retry-After and makes no event when the store is full, and recovers", async () => {
    const hold = gate();
    const { source, events } = await startWebhook(makeApp, {}, { app: { maxQueued: 2 }, reply: () => hold.promise });
    expect((await postJson(source.url, { n: 1 })).status).to.equal(202);
    expect((await postJson(source.url, { n: 2 })).status).to.equal(202);
    await events.waitFor(2);
    for (const n of [3, 4]) {
      const reply = await postJson(source.url, { n });
      expect(reply.status).to.equal(503);
      expect(Number(reply.headers.get("retry-after"))).to.be.at.least(1);
      expect(reply.json().error).to.equal("queue_full");
    }
    // Racing requests: admitted together, the store still holds the line.
    const burst = await Promise.all([5, 6, 7].map((n) => postJson(source.url, { n })));
    expect(burst.map((r) => r.status)).to.deep.equal([503, 503, 503]);
    await sleep(50);
    expect(events.count).to.equal(2);
    hold.open();
    await sleep(50);
    expect((await postJson(source.url, { n: 8 })).status).to.equal(202);
    await events.waitFor(3);
    expect(events.events.map((e) => (e.body as { n: number }).n)).to.deep.equal([1, 2, 8]);
  });

  it("answers 503 with Retry-After and makes no event when the store is broken, and recovers", async () => {
    class BrokenStore extends MemoryStore {
      failAdmit = false;
      failEnqueue = false;
      override admit(queue: string) {
        if (this.failAdmit) throw new Error("disk on fire");
        return super.admit(queue);
      }
      override async enqueue(queue: string, message: QueuedMessage, options?: { internal?: boolean }) {
        if (this.failEnqueue) throw new Error("disk full");
        return super.enqueue(queue, message, options);
      }
    }
    const store = new BrokenStore();
    const { source, events } = await startWebhook(makeApp, {}, { app: { store } });
    store.failAdmit = true;
    const a = await postJson(source.url, { n: 1 });
    store.failAdmit = false;
    store.failEnqueue = true;
    const b = await postJson(source.url, { n: 2 });
    store.failEnqueue = false;
    for (const reply of [a, b]) {
      expect(reply.status).to.equal(503);
      expect(reply.headers.get("retry-after")).to.match(/^\d+$/);
      expect(reply.json().error).to.equal("store_unavailable");
    }
    await sleep(50);
    expect(events.count).to.equal(0);
    expect((await postJson(source.url, { n: 3 })).status).to.equal(202);
    await events.waitFor(1);
    expect(events.events.map((e) => e.body)).to.deep.equal([{ n: 3 }]);
  });

  for (const [label, app] of [
    ["ack received, memory store", { ack: "received" as const, store: {} }],
    ["ack persisted, embedded store", { ack: "persisted" as const, store: { store: "embedded" as const } }],
  ] as const) {
    it(`answers 2xx while a slow task holds every slot, up to maxQueued (${label})`, async function () {
      this.timeout(15_000);
      const dir = mkdtempSync(join(tmpdir(), "slow-task-"));
      try {
        const hold = gate();
        const running = new Collector<WebhookEvent>((_ctx, event) => hold.promise.then(() => ({ n: (event.body as { n: number }).n })));
        const next = new Collector<unknown>();
        const created = makeApp(undefined, { maxQueued: 40, dataDir: dir, ...app.store });
        const source = webhook({ ack: app.ack });
        // The webhook's task emits to a second one, as most apps do; it takes two slots and never returns until the gate opens.
        created.task({ source, name: "slow", emit: "after", concurrency: 2 }, running.handler);
        created.task({ source: "after", name: "after" }, next.handler);
        await created.start();
        // 38 more requests than slots, 8 at a time: every one is answered while both runs are still blocked.
        const statuses: number[] = [];
        for (let batch = 0; batch < 5; batch++) {
          const replies = await Promise.all(Array.from({ length: 8 }, (_, n) => postJson(source.url, { n: batch * 8 + n })));
          statuses.push(...replies.map((r) => r.status));
          expect(running.count, "runs started").to.equal(2);
        }
        expect(statuses).to.deep.equal(Array(40).fill(202));
        // The queue holds its 40 (2 running, 38 waiting): the next is refused, not held.
        const over = await postJson(source.url, { n: 40 });
        expect(over.status).to.equal(503);
        expect(next.count).to.equal(0);
        hold.open();
        await running.waitFor(40, 10_000);
        await next.waitFor(40, 10_000);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it("answers 503 to concurrent requests beyond the limit, never half-making an event", async () => {
    const hold = gate();
    const { source, events } = await startWebhook(makeApp, {}, { app: { maxQueued: 5 }, reply: () => hold.promise });
    const replies = await Promise.all(Array.from({ length: 20 }, (_, n) => send(source.url, { body: String(n), headers: { "content-type": "application/json" } })));
    const accepted = replies.filter((r) => r.status === 202);
    const refused = replies.filter((r) => r.status === 503);
    expect(accepted.length).to.equal(5);
    expect(refused.length).to.equal(15);
    for (const r of refused) expect(r.headers.get("retry-after")).to.match(/^\d+$/);
    await events.waitFor(5);
    await sleep(50);
    expect(events.count).to.equal(5);
    expect(events.received.map((r) => r.ctx.eventId).sort()).to.deep.equal(accepted.map((r) => r.json().id).sort());
    hold.open();
  });
});
