import { expect } from "chai";
import { CoreApp, PermanentError, silentLogger, type CoreAppOptions, type TaskContext, type WebhookEvent } from "../../src/index";
import { sleep, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { until } from "../helpers/wait";

/** What each test event carries: its burst (the group key), its number, when it was sent. */
export interface Sent {
  readonly key: string;
  readonly n: number;
  readonly sentAt: number;
}

/**
 * The debounce and batch checks, run against one engine: `storeOptions` gives each app its
 * store (a fresh one per call). Requests are real HTTP requests to the app's webhook.
 */
export function groupTaskSuite(engine: string, storeOptions: () => Pick<CoreAppOptions, "store" | "dataDir">, cleanup: () => Promise<void> = async () => {}): void {
  describe(`debounce and batch (${engine})`, function () {
    this.timeout(60_000);
    const apps: CoreApp[] = [];
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.stop({ timeoutMs: 3_000 });
      await cleanup();
    });

    function newApp(extra: CoreAppOptions = {}): CoreApp {
      const app = new CoreApp("groups", { ...storeOptions(), logger: silentLogger, shutdownTimeoutMs: 3_000, ...extra });
      apps.push(app);
      return app;
    }

    async function post(url: string, value: Omit<Sent, "sentAt">): Promise<string> {
      const reply = await postJson(url, { ...value, sentAt: Date.now() });
      expect(reply.status).to.equal(202);
      return reply.json<{ id: string }>().id;
    }

    it("debounce: 20 bursts of 50 events (a key per burst) run 20 times, each with its burst's newest event and all 50 of its events", async () => {
      const source = webhook();
      const runs: Array<{ event: Sent; batch: Sent[] }> = [];
      const app = newApp();
      app.task({ source, name: "bursts", debounce: { periodMs: 1_000, key: (e) => (e.body as Sent).key } }, async (ctx: TaskContext<WebhookEvent>, event: WebhookEvent) => {
        runs.push({ event: event.body as Sent, batch: ctx.batch.map((e) => e.body as Sent) });
      });
      await app.start();
      let longestGap = 0;
      await Promise.all(
        Array.from({ length: 20 }, async (_, b) => {
          let last = Date.now();
          for (let n = 0; n < 50; n++) {
            await post(source.url, { key: `burst-${b}`, n });
            longestGap = Math.max(longestGap, Date.now() - last);
            last = Date.now();
          }
        }),
      );
      // A burst is events closer than the period: a machine too slow to send them so says so here.
      expect(longestGap, "longest gap between two events of a burst").to.be.below(1_000);
      await until(() => runs.length >= 20, 15_000);
      await sleep(1_500);
      expect(runs).to.have.length(20);
      const keys = new Set(runs.map((r) => r.event.key));
      expect(keys.size).to.equal(20);
      for (const run of runs) {
        expect(run.event.n, `newest event of ${run.event.key}`).to.equal(49);
        expect(run.batch.map((e) => e.n), `events of ${run.event.key}, oldest first`).to.deep.equal(Array.from({ length: 50 }, (_, n) => n));
        expect(run.batch.every((e) => e.key === run.event.key)).to.equal(true);
      }
    });

    it("debounce with maxWaitMs under a steady trickle: a run at least every maxWaitMs (with tolerance), every event handled once", async () => {
      const source = webhook();
      const runs: Array<{ at: number; batch: Sent[] }> = [];
      const app = newApp();
      app.task({ source, name: "trickle", debounce: { periodMs: 300, maxWaitMs: 600 } }, async (ctx: TaskContext<WebhookEvent>) => {
        runs.push({ at: Date.now(), batch: ctx.batch.map((e) => e.body as Sent) });
      });
      await app.start();
      const started = Date.now();
      let n = 0;
      while (Date.now() - started < 3_000) {
        await post(source.url, { key: "one", n: n++ });
        await sleep(50);
      }
      await until(() => runs.reduce((sum, r) => sum + r.batch.length, 0) === n, 5_000);
      // A period of 300 ms never passes in the trickle: only maxWaitMs makes it run.
      expect(runs.length, "runs during 3 s of trickle").to.be.at.least(4);
      for (const run of runs) {
        const waited = run.at - run.batch[0].sentAt;
        expect(waited, "the oldest event of a run waited at most maxWaitMs plus slack").to.be.at.most(600 + 350);
      }
      const handled = runs.flatMap((r) => r.batch.map((e) => e.n)).sort((a, b) => a - b);
      expect(handled).to.deep.equal(Array.from({ length: n }, (_, i) => i));
    });

    it("batch: sizes never above maxSize, the first event of a batch never waits past maxWaitMs plus slack, each event once", async () => {
      const source = webhook();
      const batches: Array<{ at: number; events: Sent[] }> = [];
      const app = newApp();
      app.task({ source, name: "batches", batch: { maxSize: 10, maxWaitMs: 300 } }, async (_ctx, events: WebhookEvent[]) => {
        batches.push({ at: Date.now(), events: events.map((e) => e.body as Sent) });
      });
      await app.start();
      let n = 0;
      for (; n < 95; n++) await post(source.url, { key: "b", n });
      for (let i = 0; i < 5; i++) {
        await sleep(120);
        await post(source.url, { key: "b", n: n++ });
      }
      await until(() => batches.reduce((sum, b) => sum + b.events.length, 0) >= n, 10_000);
      await sleep(500);
      const sizes = batches.map((b) => b.events.length);
      expect(Math.max(...sizes), `batch sizes ${sizes.join(",")}`).to.be.at.most(10);
      expect(sizes.filter((s) => s === 10).length, "full batches").to.be.at.least(8);
      for (const batch of batches) expect(batch.at - batch.events[0].sentAt, "wait of a batch's first event").to.be.at.most(300 + 250);
      const handled = batches.flatMap((b) => b.events.map((e) => e.n)).sort((a, b) => a - b);
      expect(handled).to.deep.equal(Array.from({ length: n }, (_, i) => i));
    });

    it("batch: a thrown error retries the whole batch, with the attempt counted", async () => {
      const source = webhook();
      const runs: Array<{ attempt: number; ns: number[] }> = [];
      const app = newApp();
      app.task({ source, name: "flaky", batch: { maxSize: 5, maxWaitMs: 10_000 }, retry: { attempts: 3, initialDelayMs: 50 } }, async (ctx, events: WebhookEvent[]) => {
        runs.push({ attempt: ctx.attempt, ns: events.map((e) => (e.body as Sent).n) });
        if (ctx.attempt === 1) throw new Error("the downstream API is down");
      });
      await app.start();
      for (let n = 0; n < 5; n++) await post(source.url, { key: "f", n });
      await until(() => runs.some((r) => r.attempt === 2), 5_000);
      await sleep(300);
      expect(runs).to.have.length(2);
      expect(runs[0]).to.deep.equal({ attempt: 1, ns: [0, 1, 2, 3, 4] });
      expect(runs[1]).to.deep.equal({ attempt: 2, ns: [0, 1, 2, 3, 4] });
      expect((await app.status()).queues.find((q) => q.queue === "webhook:flaky")?.depth).to.equal(0);
    });

    it("a group's run that outlives timeoutMs counts as failed: the whole group runs again", async () => {
      const source = webhook();
      const runs: Array<{ attempt: number; ns: number[] }> = [];
      const app = newApp();
      app.task({ source, name: "slowpoke", debounce: { periodMs: 100 }, timeoutMs: 300, retry: { attempts: 3, initialDelayMs: 50 } }, async (ctx: TaskContext<WebhookEvent>) => {
        runs.push({ attempt: ctx.attempt, ns: ctx.batch.map((e) => (e.body as Sent).n) });
        if (ctx.attempt === 1) await sleep(5_000);
      });
      await app.start();
      for (let n = 0; n < 3; n++) await post(source.url, { key: "t", n });
      await until(() => runs.length === 2, 5_000);
      expect(runs).to.deep.equal([
        { attempt: 1, ns: [0, 1, 2] },
        { attempt: 2, ns: [0, 1, 2] },
      ]);
      await until(async () => (await app.status()).queues.find((q) => q.queue === "webhook:slowpoke")?.depth === 0, 3_000);
    });

    it("batch: a PermanentError makes every event of the batch a dead letter", async () => {
      const source = webhook();
      let runs = 0;
      const app = newApp();
      app.task({ source, name: "doomed", batch: { maxSize: 4, maxWaitMs: 10_000 } }, async () => {
        runs++;
        throw new PermanentError("the account was closed");
      });
      await app.start();
      const ids: string[] = [];
      for (let n = 0; n < 4; n++) ids.push(await post(source.url, { key: "d", n }));
      await until(async () => (await app.deadLetters.list("webhook:doomed")).length === 4, 5_000);
      const letters = await app.deadLetters.list("webhook:doomed");
      expect(letters.map((l) => l.message.id).sort()).to.deep.equal([...ids].sort());
      expect(letters.every((l) => l.error.includes("the account was closed") && l.attempts === 1)).to.equal(true);
      expect(runs).to.equal(1);
    });

    it("debounce: the events a run took with its burst are noted superseded in the history, the newest as a success", async () => {
      const source = webhook();
      let runs = 0;
      const app = newApp();
      app.task({ source, name: "noted", debounce: { periodMs: 150 } }, async () => {
        runs++;
      });
      await app.start();
      const ids: string[] = [];
      for (let n = 0; n < 3; n++) ids.push(await post(source.url, { key: "s", n }));
      await until(() => runs === 1, 5_000);
      await until(async () => (await app.events.get(ids[0]))?.runs.length === 1 && (await app.events.get(ids[2]))?.runs.length === 1, 5_000);
      for (const id of ids.slice(0, 2)) {
        const event = (await app.events.get(id))!;
        expect(event.runs.map((r) => r.outcome)).to.deep.equal(["superseded"]);
        expect(event.status).to.equal("succeeded");
      }
      const newest = (await app.events.get(ids[2]))!;
      expect(newest.runs.map((r) => r.outcome)).to.deep.equal(["success"]);
    });

    it("a replayed event of a debounced task runs again, as a burst of its own", async () => {
      const source = webhook();
      const runs: Sent[][] = [];
      const app = newApp();
      app.task({ source, name: "again", debounce: { periodMs: 100, key: (e) => (e.body as Sent).key } }, async (ctx: TaskContext<WebhookEvent>) => {
        runs.push(ctx.batch.map((e) => e.body as Sent));
      });
      await app.start();
      const id = await post(source.url, { key: "r", n: 1 });
      await until(() => runs.length === 1, 5_000);
      await until(async () => (await app.events.get(id))?.runs.length === 1, 5_000);
      const replay = await app.events.replay(id);
      await until(() => runs.length === 2, 5_000);
      expect(runs[1]!.map((e) => e.n)).to.deep.equal([1]);
      await until(async () => (await app.events.get(replay.id))?.runs[0]?.outcome === "success", 5_000);
    });

    it("a paused task holds its groups (they keep collecting, status shows them), and runs them once resumed", async () => {
      const source = webhook();
      const runs: Sent[][] = [];
      const app = newApp();
      app.task({ source, name: "held", debounce: { periodMs: 100 } }, async (ctx: TaskContext<WebhookEvent>) => {
        runs.push(ctx.batch.map((e) => e.body as Sent));
      });
      await app.start();
      await app.pause("held");
      for (let n = 0; n < 6; n++) await post(source.url, { key: "p", n });
      await sleep(600);
      expect(runs).to.have.length(0);
      const queue = (await app.status()).queues.find((q) => q.queue === "webhook:held")!;
      expect(queue.waiting).to.equal(6);
      await app.resume("held");
      await until(() => runs.length === 1, 5_000);
      expect(runs[0].map((e) => e.n)).to.deep.equal([0, 1, 2, 3, 4, 5]);
    });

    it("status and metrics count the events collecting in a batch that is not due yet", async () => {
      const source = webhook();
      const app = newApp({ metrics: true });
      app.task({ source, name: "slow", batch: { maxSize: 100, maxWaitMs: 60_000 } }, async () => undefined);
      await app.start();
      for (let n = 0; n < 7; n++) await post(source.url, { key: "c", n });
      await until(async () => (await app.status()).queues.find((q) => q.queue === "webhook:slow")?.collecting === 7, 5_000);
      const queue = (await app.status()).queues.find((q) => q.queue === "webhook:slow")!;
      expect(queue.waiting).to.equal(7);
      expect(queue.inFlight).to.equal(0);
      const metrics = await app.metrics!.metrics();
      expect(metrics).to.match(/webhook_queue_messages\{queue="webhook:slow",state="collecting"\} 7/);
      expect(metrics).to.match(/webhook_queue_messages\{queue="webhook:slow",state="ready"\} 0/);
    });

    it("the result of a batch's run is emitted once, for the whole batch", async () => {
      const source = webhook();
      const sums: number[] = [];
      const app = newApp();
      app.task({ source, name: "summed", emit: "sums", batch: { maxSize: 3, maxWaitMs: 10_000 } }, async (_ctx, events: WebhookEvent[]) => events.reduce((sum, e) => sum + (e.body as Sent).n, 0));
      app.task({ source: "sums", name: "sink" }, async (_ctx, sum: unknown) => void sums.push(sum as number));
      await app.start();
      for (const n of [1, 2, 3]) await post(source.url, { key: "x", n });
      await until(() => sums.length === 1, 5_000);
      await sleep(300);
      expect(sums).to.deep.equal([6]);
    });
  });
}
