import { expect } from "chai";
import { performance } from "node:perf_hooks";
import { CoreApp, type CoreAppOptions, type TaskContext, type WebhookEvent } from "../../src/index";
import { Queue } from "../../src/app/queue";
import { sleep, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { until } from "../helpers/wait";
import { maxOverlapPerKey, maxStartsPerWindow, type Span } from "../helpers/flow-measures";
import { ENGINES, useEngineApps, type Engine } from "../helpers/engine-apps";

const now = () => performance.timeOrigin + performance.now();

interface Work {
  n: number;
  key: string;
}

describe("flow control: concurrency per key, rate limits, delayed emits", function () {
  this.timeout(120_000);
  /** An app on `engine`; on PostgreSQL every app of a test shares one schema (replicas). */
  const onEngine = useEngineApps("flow", 3_000);
  const appOn = (engine: Engine, name = "flow", extra: CoreAppOptions = {}): CoreApp => onEngine(engine, name, { shutdownTimeoutMs: 3_000, postgres: { leaseMs: 2_000 }, ...extra });

  async function feed(app: CoreApp, queue: string, values: readonly unknown[], prefix = "e"): Promise<void> {
    for (let i = 0; i < values.length; i += 200) {
      const copies = values.slice(i, i + 200).flatMap((payload, j) => app.copiesFor(queue, { id: `${prefix}${i + j}`, payload, attempts: 0, enqueuedAt: Date.now() }));
      await app.store.enqueueAll(copies, { internal: true });
    }
  }

  for (const engine of ENGINES) {
    const replicas = engine === "postgres" ? 3 : 1;
    it(`${engine}: 3,000 events over 300 keys with concurrency { limit: 2, key } (${replicas} app${replicas > 1 ? "s" : ""}): at most 2 per key at once, some key at 2, each run once`, async () => {
      const spans: Span[] = [];
      const seen = new Map<number, number>();
      const made: CoreApp[] = [];
      for (let r = 0; r < replicas; r++) {
        const app = appOn(engine);
        app.task({ source: new Queue<Work>("work"), name: "work", concurrency: { limit: 2, key: (w) => w.key, perProcess: 32 } }, async (_ctx, w: Work) => {
          const start = now();
          await sleep(1 + (w.n % 4));
          spans.push({ key: w.key, n: w.n, start, end: now() });
          seen.set(w.n, (seen.get(w.n) ?? 0) + 1);
        });
        made.push(app);
      }
      for (const app of made) await app.start();
      await feed(made[0]!, "work", Array.from({ length: 3000 }, (_, n) => ({ n, key: `k${Math.floor(n / 10)}` })));
      await until(() => seen.size === 3000, 90_000);
      await sleep(200);
      const overlap = maxOverlapPerKey(spans);
      const max = Math.max(...overlap.values());
      expect(max, "most runs of one key at once").to.equal(2);
      expect([...seen.values()].every((c) => c === 1), "every event ran once").to.equal(true);
      expect(spans).to.have.length(3000);
    });

    it(`${engine}: rateLimit { limit: 20, periodMs: 500 } under 4x that load: no window of 500 ms holds more than 20 starts, and every event runs`, async () => {
      const starts: number[] = [];
      const made: CoreApp[] = [];
      for (let r = 0; r < (engine === "postgres" ? 2 : 1); r++) {
        const app = appOn(engine);
        app.task({ source: new Queue<Work>("work"), name: "work", rateLimit: { limit: 20, periodMs: 500 } }, async () => {
          starts.push(now());
        });
        made.push(app);
      }
      for (const app of made) await app.start();
      // 160 events/s for 1.5 s: 240 events, four times the limit (3 periods; the drain takes 6 periods).
      const begin = Date.now();
      for (let tick = 0; tick < 15; tick++) {
        await feed(made[tick % made.length]!, "work", Array.from({ length: 16 }, (_, i) => ({ n: tick * 16 + i, key: "" })), `t${tick}-`);
        await sleep(Math.max(0, begin + (tick + 1) * 100 - Date.now()));
      }
      await until(() => starts.length >= 240, 30_000);
      await sleep(300);
      expect(starts).to.have.length(240);
      // Starts are recorded in the handler, after the claim that counted them (by the store's
      // clock, in whole ms in-process); on a busy machine that can be tens of ms later, so the
      // windows are 50 ms shorter than the period. Without the limit, 240 starts come in ~1.5 s.
      const t0 = Math.min(...starts);
      expect(maxStartsPerWindow(starts, 450), starts.map((s) => Math.round(s - t0)).join(" ")).to.be.at.most(20);
      expect(maxStartsPerWindow(starts, 600)).to.be.at.least(20);
    });

    const across = engine === "memory" ? "are held until the app stops (the memory store keeps nothing past it)" : "across a restart all run, none before its time";
    it(`${engine}: ctx.emit with delays: 1,000 delayed messages ${across}`, async () => {
      const ran = new Map<number, number>();
      const early: number[] = [];
      const build = (app: CoreApp) => {
        app.task({ source: "start", name: "schedule" }, async (ctx: TaskContext, batch: { from: number; count: number }) => {
          for (let i = batch.from; i < batch.from + batch.count; i++) {
            const dueAt = Date.now() + 1_500 + (i % 10) * 150;
            ctx.emit(followUps, { i, dueAt }, i % 2 === 0 ? { delayMs: dueAt - Date.now() } : { runAt: new Date(dueAt) });
          }
        });
        app.task({ source: followUps, name: "follow-up" }, async (_ctx, f: { i: number; dueAt: number }) => {
          if (Date.now() < f.dueAt) early.push(f.i);
          ran.set(f.i, (ran.get(f.i) ?? 0) + 1);
        });
      };
      const first = appOn(engine);
      build(first);
      await first.start();
      await feed(first, "start", Array.from({ length: 10 }, (_, b) => ({ from: b * 100, count: 100 })));
      await until(async () => (await first.store.depth("start")) === 0, 10_000);
      expect((await first.status()).queues.find((q) => q.queue === "follow-ups")?.delayed).to.be.greaterThan(900);
      await first.stop({ timeoutMs: 3_000 });
      expect(ran.size, "none ran before the restart").to.equal(0);
      if (engine === "memory") return; // nothing survives a restart of the memory store
      const second = appOn(engine);
      build(second);
      await second.start();
      await until(() => ran.size === 1000, 20_000);
      await sleep(200);
      expect(early).to.deep.equal([]);
      expect([...ran.values()].every((c) => c === 1)).to.equal(true);
    });
  }

  it("memory: the delayed messages run at their time when the app keeps running", async () => {
    const app = appOn("memory");
    const ran: number[] = [];
    app.task({ source: "start", name: "schedule" }, async (ctx: TaskContext) => {
      ctx.emit(followUps, { i: 1, dueAt: Date.now() + 300 }, { delayMs: 300 });
    });
    app.task({ source: followUps, name: "follow-up" }, async (_ctx, f: { i: number; dueAt: number }) => void ran.push(Date.now() - f.dueAt));
    await app.start();
    await feed(app, "start", [{}]);
    await until(() => ran.length === 1, 3_000);
    expect(ran[0]).to.be.at.least(0);
  });

  for (const engine of ENGINES) {
    it(`${engine}: ctx.emit is written with the run's completion: a run that fails and is retried emits once`, async () => {
      const app = appOn(engine);
      const got: string[] = [];
      app.task({ source: "start", name: "flaky", retry: { attempts: 3, initialDelayMs: 10 } }, async (ctx: TaskContext) => {
        ctx.emit("after", `from attempt ${ctx.attempt}`);
        if (ctx.attempt === 1) throw new Error("first attempt fails after emitting");
      });
      app.task({ source: "after", name: "after" }, async (_ctx, value: string) => void got.push(value));
      await app.start();
      await feed(app, "start", [{}]);
      await until(() => got.length === 1, 5_000);
      await sleep(300);
      expect(got).to.deep.equal(["from attempt 2"]);
    });
  }

  for (const engine of ["memory", "embedded"] as const) {
    it(`${engine}: rateLimit counts a start when the handler starts: a backlog admitted while the only slot was busy does not start at once past the limit`, async () => {
      const app = appOn(engine);
      const source = webhook();
      const starts: number[] = [];
      // One slot: the window moves on twice while the slow run holds it, and the events it let
      // through must not all start the moment the slot frees.
      app.task<WebhookEvent<{ n: number }>>({ source, name: "limited", concurrency: 1, rateLimit: { limit: 2, periodMs: 500 } }, async (_ctx, event) => {
        starts.push(now());
        if (event.body.n === 2) await sleep(900);
      });
      await app.start();
      for (let n = 0; n < 8; n++) expect((await postJson(source.url, { n })).status).to.equal(202);
      await until(() => starts.length === 8, 20_000);
      const t0 = Math.min(...starts);
      expect(maxStartsPerWindow(starts, 450), starts.map((s) => Math.round(s - t0)).join(" ")).to.be.at.most(2);
    });
  }

  it("status shows the events a limit holds back as waiting and limited, not in flight", async () => {
    const app = appOn("memory", "flow", { metrics: true });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    app.task({ source: new Queue<Work>("work"), name: "work", concurrency: { limit: 1, key: (w) => w.key } }, async () => gate);
    await app.start();
    await feed(app, "work", Array.from({ length: 5 }, (_, n) => ({ n, key: "same" })));
    await until(async () => (await app.status()).queues[0]!.limited === 4, 3_000);
    const q = (await app.status()).queues[0]!;
    expect(q).to.deep.include({ inFlight: 1, waiting: 4, limited: 4, delayed: 0 });
    const metrics = await app.metrics!.metrics();
    expect(metrics).to.match(/webhook_queue_messages\{queue="work",state="limited"\} 4/);
    expect(metrics).to.match(/webhook_queue_messages\{queue="work",state="in_flight"\} 1/);
    release();
  });

  it("wrong flow options are refused when the task is added, naming the option", () => {
    const app = appOn("memory");
    const handler = async () => undefined;
    const refused = (options: Record<string, unknown>) => {
      try {
        app.task({ source: "q", name: `t${Math.random()}`.replace(".", ""), ...options } as never, handler);
      } catch (error) {
        return (error as Error).message;
      }
      return "accepted";
    };
    expect(refused({ concurrency: { limit: 0 } })).to.match(/concurrency\.limit must be an integer >= 1, got 0/);
    expect(refused({ concurrency: { limit: 2, key: "body.id" } })).to.match(/concurrency\.key must be a function/);
    expect(refused({ concurrency: { limit: 2, keys: () => "" } })).to.match(/concurrency: unknown option "keys"/);
    expect(refused({ concurrency: "4" })).to.match(/concurrency must be an integer >= 1, or \{ limit, key\? \}/);
    expect(refused({ rateLimit: { limit: 5 } })).to.match(/rateLimit\.periodMs must be an integer >= 1, got undefined/);
    expect(refused({ rateLimit: { limit: 5, periodMs: 2 ** 31 } })).to.match(/rateLimit\.periodMs must be at most/);
    expect(refused({ rateLimit: 10 })).to.match(/rateLimit must be \{ limit, periodMs, key\? \}/);
  });

  it("wrong ctx.emit calls throw in the handler, naming the problem", async () => {
    const app = appOn("memory");
    const errors: string[] = [];
    app.task({ source: "start", name: "emitter" }, async (ctx: TaskContext) => {
      for (const call of [
        () => ctx.emit("out", 1, { delayMs: -1 }),
        () => ctx.emit("out", 1, { delayMs: 10, runAt: 5 } as never),
        () => ctx.emit("bad queue!", 1),
        // Refused by the types too: the run-time check is for JavaScript callers.
        () => ctx.emit("out", undefined as never),
        () => ctx.emit("out", () => 1),
        () => ctx.emit("out", 1, { runAt: "tomorrow" } as never),
      ]) {
        try {
          call();
          errors.push("accepted");
        } catch (error) {
          errors.push((error as Error).message);
        }
      }
    });
    await app.start();
    await feed(app, "start", [{}]);
    await until(() => errors.length === 6, 3_000);
    expect(errors[0]).to.match(/delayMs must be a number of milliseconds/);
    expect(errors[1]).to.match(/give delayMs or runAt, not both/);
    expect(errors[2]).to.match(/the queue must be a Queue or a queue name/);
    expect(errors[3]).to.match(/the value is undefined/);
    expect(errors[4]).to.match(/cannot be stored/);
    expect(errors[5]).to.match(/runAt must be a Date or a time/);
  });
});

const followUps = new Queue<{ i: number; dueAt: number }>("follow-ups");
