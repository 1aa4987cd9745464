import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, MemoryStore, PermanentError, Queue, silentLogger, type TaskContext, type WebhookEvent } from "../../src/index";
import { ForwardingStore } from "../../src/store/forwarding-store";
import type { ClaimedGroups, DeadLetter, GroupRule, QueuedMessage } from "../../src/store/store";
import { sleep, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { until } from "../helpers/wait";

interface Sent { readonly key: string; readonly n: number }

/** A store whose retry and dead-letter writes each take a while, counting how many are under way at once. */
class SlowWritesStore extends ForwardingStore {
  pending = 0;
  mostAtOnce = 0;
  override retryLater(queue: string, message: QueuedMessage, visibleAt: number): Promise<void> {
    return this.slow(() => super.retryLater(queue, message, visibleAt));
  }
  override deadLetter(letter: DeadLetter): Promise<void> {
    return this.slow(() => super.deadLetter(letter));
  }
  private async slow(write: () => Promise<void>): Promise<void> {
    this.pending++;
    this.mostAtOnce = Math.max(this.mostAtOnce, this.pending);
    try {
      await sleep(20);
      await write();
    } finally {
      this.pending--;
    }
  }
}

describe("debounce and batch: a failed group's writes", function () {
  this.timeout(30_000);
  const apps: CoreApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
  });

  // One write after the other, a failed batch of 10,000 took 17 s to be retried on the embedded
  // store and 40 s to become dead letters; started at once, the store commits them together.
  for (const permanent of [false, true]) {
    it(`a failed batch's ${permanent ? "dead letters" : "retries"} are written all at once, not one after the other`, async () => {
      const store = new SlowWritesStore(new MemoryStore());
      const source = webhook();
      const runs: number[] = [];
      const app = new CoreApp("writes", { store, logger: silentLogger });
      apps.push(app);
      app.task({ source, name: "w", batch: { maxSize: 50, maxWaitMs: 60_000 }, retry: { attempts: 2, initialDelayMs: 50 } }, async (ctx, events: WebhookEvent[]) => {
        runs.push(events.length);
        if (permanent) throw new PermanentError("refused");
        if (ctx.attempt === 1) throw new Error("down");
      });
      await app.start();
      await Promise.all(Array.from({ length: 50 }, (_, n) => postJson(source.url, { key: "w", n })));
      if (permanent) await until(async () => (await app.deadLetters.list("webhook:w")).length === 50, 5_000);
      else await until(() => runs.length === 2, 5_000);
      expect(runs).to.deep.equal(permanent ? [50] : [50, 50]);
      expect(store.mostAtOnce, "writes under way at once").to.equal(50);
    });
  }
});

/** A store noting when each group claim starts and ends. */
class ClaimTimesStore extends ForwardingStore {
  readonly claims: Array<{ start: number; end: number }> = [];
  override claimGroups = async (queue: string, rule: GroupRule, limit: number): Promise<ClaimedGroups> => {
    const start = performance.now();
    try {
      return await this.inner.claimGroups!(queue, rule, limit);
    } finally {
      this.claims.push({ start, end: performance.now() });
    }
  };
}

describe("debounce and batch: the time between claims", function () {
  this.timeout(30_000);
  const apps: CoreApp[] = [];
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 500 });
  });

  // A group claim reads every waiting event: on a long backlog each takes long, and claims one
  // after the other would hold the process (and the webhooks' answers) for several of them.
  it("a claim that handed out a group is not followed by another at once, even with room for more runs", async () => {
    const store = new ClaimTimesStore(new MemoryStore());
    const source = webhook();
    let started = 0;
    const app = new CoreApp("gaps", { store, logger: silentLogger });
    apps.push(app);
    app.task({ source, name: "slow", batch: { maxSize: 1, maxWaitMs: 60_000 }, concurrency: 16 }, async () => {
      started++;
      await sleep(5_000);
    });
    await app.start();
    for (let n = 0; n < 8; n++) {
      await postJson(source.url, { key: "g", n });
      await sleep(30);
    }
    await until(() => started === 8, 5_000);
    const gaps = store.claims.slice(1).map((c, i) => c.start - store.claims[i].end);
    // 10 ms is the least gap the runner leaves, counted from when it saw the claim end, which
    // on a busy machine is a few milliseconds after this wrapper noted it; back to back is ~0.
    expect(Math.min(...gaps), `gaps between claims (ms): ${gaps.map((g) => g.toFixed(1)).join(", ")}`).to.be.at.least(5);
  });
});

for (const engine of ["memory", "embedded"] as const) {
  describe(`debounce and batch, edge cases (${engine})`, function () {
    this.timeout(30_000);
    const apps: CoreApp[] = [];
    const dirs: string[] = [];
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });
    function newDir(): string {
      const dir = mkdtempSync(join(tmpdir(), "groups-edges-"));
      dirs.push(dir);
      return dir;
    }
    /** An app on this engine; on the embedded store in `dir` (a fresh directory without it). */
    function newApp(dir?: string): CoreApp {
      const where = engine === "embedded" ? { dataDir: dir ?? newDir() } : {};
      const app = new CoreApp("edges", { store: engine, ...where, logger: silentLogger, shutdownTimeoutMs: 2_000 });
      apps.push(app);
      return app;
    }
    async function post(url: string, value: Sent): Promise<string> {
      const reply = await postJson(url, value);
      expect(reply.status).to.equal(202);
      return reply.json<{ id: string }>().id;
    }

    it("batch with maxSize 1: each event is a batch of its own", async () => {
      const source = webhook();
      const runs: number[][] = [];
      const app = newApp();
      app.task({ source, name: "single", batch: { maxSize: 1, maxWaitMs: 60_000 } }, async (_ctx, events: WebhookEvent[]) => void runs.push(events.map((e) => (e.body as Sent).n)));
      await app.start();
      for (let n = 0; n < 10; n++) await post(source.url, { key: "a", n });
      await until(() => runs.length === 10, 5_000);
      await sleep(200);
      expect(runs.map((r) => r.length)).to.deep.equal(Array.from({ length: 10 }, () => 1));
    });

    it("what a batch sent with ctx.emit before failing is not sent: each value arrives once, from the run that succeeded", async () => {
      const source = webhook();
      const out = new Queue<{ n: number }>("out");
      const got: number[] = [];
      const app = newApp();
      app.task({ source, name: "sender", batch: { maxSize: 5, maxWaitMs: 100 }, retry: { attempts: 3, initialDelayMs: 50 } }, async (ctx, events: WebhookEvent[]) => {
        for (const e of events) await ctx.emit(out, { n: (e.body as Sent).n });
        if (ctx.attempt === 1) throw new Error("failed after sending");
      });
      app.task({ source: out, name: "sink" }, async (_ctx, value: { n: number }) => void got.push(value.n));
      await app.start();
      for (let n = 0; n < 10; n++) await post(source.url, { key: "a", n });
      await until(() => got.length >= 10, 5_000);
      await sleep(500);
      expect(got.sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 10 }, (_, n) => n));
    });

    if (engine === "embedded") {
      it("a stop during a burst's run and while another collects: the next start runs both, whole", async () => {
        const dir = newDir();
        const seen: number[][] = [];
        let release: () => void = () => undefined;
        const first = newApp(dir);
        const key = (e: WebhookEvent): string => (e.body as Sent).key;
        let source = webhook();
        first.task({ source, name: "cut", debounce: { periodMs: 100, key } }, async (ctx: TaskContext<WebhookEvent>) => {
          seen.push(ctx.batch.map((e) => (e.body as Sent).n));
          await new Promise<void>((resolve) => (release = resolve));
        });
        await first.start();
        for (let n = 0; n < 3; n++) await post(source.url, { key: "running", n });
        await until(() => seen.length === 1, 5_000);
        for (let n = 10; n < 13; n++) await post(source.url, { key: "collecting", n });
        await first.stop({ timeoutMs: 300 });
        release();
        source = webhook();
        const again: number[][] = [];
        const second = newApp(dir);
        second.task({ source, name: "cut", debounce: { periodMs: 100, key } }, async (ctx: TaskContext<WebhookEvent>) => void again.push(ctx.batch.map((e) => (e.body as Sent).n)));
        await second.start();
        await until(() => again.flat().length >= 6, 5_000);
        await sleep(500);
        expect(again.map((r) => r.join(",")).sort()).to.deep.equal(["0,1,2", "10,11,12"]);
      });

      it("events queued for a plain task are handed out once the task is batched at the next start", async () => {
        const dir = newDir();
        let source = webhook();
        const first = newApp(dir);
        first.task({ source, name: "became" }, async () => undefined);
        await first.start();
        await first.pause("became");
        for (let n = 0; n < 5; n++) await post(source.url, { key: "a", n });
        await first.stop({ timeoutMs: 1_000 });
        source = webhook();
        const runs: number[][] = [];
        const second = newApp(dir);
        second.task({ source, name: "became", batch: { maxSize: 10, maxWaitMs: 200 } }, async (_ctx, events: WebhookEvent[]) => void runs.push(events.map((e) => (e.body as Sent).n)));
        await second.start();
        await second.resume("became");
        await until(() => runs.flat().length === 5, 5_000);
        expect(runs).to.deep.equal([[0, 1, 2, 3, 4]]);
      });
    }

    it("dead-letter replay of a keyed batch runs it again as a batch, keys kept apart", async () => {
      const source = webhook();
      const runs: Sent[][] = [];
      let fail = true;
      const app = newApp();
      app.task({ source, name: "dl", batch: { maxSize: 4, maxWaitMs: 200, key: (e) => (e.body as Sent).key } }, async (_ctx, events: WebhookEvent[]) => {
        runs.push(events.map((e) => e.body as Sent));
        if (fail) throw new PermanentError("nope");
      });
      await app.start();
      for (let n = 0; n < 2; n++) await post(source.url, { key: "a", n });
      for (let n = 0; n < 2; n++) await post(source.url, { key: "b", n });
      await until(async () => (await app.deadLetters.list("webhook:dl")).length === 4, 5_000);
      fail = false;
      runs.length = 0;
      for (const l of await app.deadLetters.list("webhook:dl")) await app.deadLetters.replay(l.message.id);
      await until(() => runs.flat().length === 4, 5_000);
      await sleep(300);
      for (const run of runs) expect(new Set(run.map((e) => e.key)).size, JSON.stringify(runs)).to.equal(1);
      expect(runs.flat().length).to.equal(4);
    });

    it("app.events.replay by filter of a debounced task replays every event of the burst, superseded ones too", async () => {
      const source = webhook();
      const runs: Sent[][] = [];
      const app = newApp();
      app.task({ source, name: "rf", debounce: { periodMs: 100, key: (e) => (e.body as Sent).key } }, async (ctx: TaskContext<WebhookEvent>) => {
        runs.push(ctx.batch.map((e) => e.body as Sent));
      });
      await app.start();
      const ids: string[] = [];
      for (let n = 0; n < 3; n++) ids.push(await post(source.url, { key: "k", n }));
      await until(() => runs.length === 1, 5_000);
      await until(async () => (await app.events.get(ids[0]))?.runs.length === 1, 5_000);
      const result = await app.events.replay({ task: "rf" });
      await until(() => runs.flat().length >= 6, 5_000);
      await sleep(400);
      expect(runs.flat().length, JSON.stringify({ runs, result })).to.equal(6);
    });

    it("debounce: events arriving while their key's burst waits for a retry join it, so the newest event runs last", async () => {
      const source = webhook();
      const runs: Array<{ attempt: number; ns: number[]; newest: number }> = [];
      const app = newApp();
      app.task({ source, name: "ord", debounce: { periodMs: 100, key: (e) => (e.body as Sent).key }, retry: { attempts: 3, initialDelayMs: 800 } }, async (ctx: TaskContext<WebhookEvent>, event: WebhookEvent) => {
        runs.push({ attempt: ctx.attempt, ns: ctx.batch.map((e) => (e.body as Sent).n), newest: (event.body as Sent).n });
        if (ctx.attempt === 1 && (event.body as Sent).n === 1) throw new Error("flaky");
      });
      await app.start();
      await post(source.url, { key: "k", n: 0 });
      await post(source.url, { key: "k", n: 1 });
      await until(() => runs.length === 1, 5_000);
      await sleep(100);
      await post(source.url, { key: "k", n: 2 });
      await until(() => runs.flatMap((r) => r.attempt > 1 || r.newest === 2 ? r.ns : []).length >= 3, 5_000);
      await sleep(1_000);
      // Event 2 waits for the retry of its key's burst and joins it: the newest event runs last.
      expect(runs, JSON.stringify(runs)).to.deep.equal([
        { attempt: 1, ns: [0, 1], newest: 1 },
        { attempt: 2, ns: [0, 1, 2], newest: 2 },
      ]);
    });

    it("a paused task's events that arrive while it is paused count as collecting in status", async () => {
      const source = webhook();
      const app = newApp();
      app.task({ source, name: "pz", batch: { maxSize: 100, maxWaitMs: 60_000 } }, async () => undefined);
      await app.start();
      await app.pause("pz");
      for (let n = 0; n < 5; n++) await post(source.url, { key: "c", n });
      await sleep(300);
      const q = (await app.status()).queues.find((x) => x.queue === "webhook:pz")!;
      expect(q.waiting).to.equal(5);
      expect(q.collecting, JSON.stringify(q)).to.equal(5);
    });
  });
}
