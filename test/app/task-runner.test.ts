import { expect } from "chai";
import { CoreApp, MemoryStore, silentLogger, type TaskContext } from "../../src/index";
import { until } from "../helpers/wait";

describe("task runner", () => {
  let app: CoreApp;
  afterEach(async () => app?.stop());

  it("passes a queue message through a chain of three tasks, emitting only defined results", async () => {
    const store = new MemoryStore();
    const seen: unknown[] = [];
    app = new CoreApp("chain", { store, logger: silentLogger })
      .task({ source: "a", emit: "b", name: "first" }, async (_ctx, n: number) => n + 1)
      .task({ source: "b", emit: "c", name: "second" }, async (_ctx, n: number) => (n % 2 === 0 ? n * 10 : undefined))
      .task({ source: "c", name: "third" }, async (_ctx, n: number) => void seen.push(n));
    await app.start();
    for (const n of [1, 2, 3]) await store.enqueue("a", { id: `m${n}`, payload: n, attempts: 0, enqueuedAt: Date.now() });
    await until(async () => (await store.depth("a")) + (await store.depth("b")) === 0 && seen.length === 2);
    expect(seen.sort()).to.deep.equal([20, 40]);
    expect(await store.depth("c")).to.equal(0);
  });

  it("hands on every emitted value at once, not at the next poll, when values arrive while the next task is claiming", async function () {
    this.timeout(30_000);
    // Ten values emitted back to back reach "consume" while its claims are out. A wake-up lost
    // then left the last one to the runner's poll, a second after start: five apps took 5 s that
    // way; handed on at once they take milliseconds.
    const started = Date.now();
    for (let round = 0; round < 5; round++) {
      const store = new MemoryStore();
      let consumed = 0;
      app = new CoreApp(`burst-${round}`, { store, logger: silentLogger })
        .task({ source: "a", emit: "b", name: "produce" }, async (_ctx, n: number) => n)
        .task({ source: "b", name: "consume" }, async () => void consumed++);
      await app.start();
      for (let n = 0; n < 10; n++) await store.enqueue("a", { id: `m${n}`, payload: n, attempts: 0, enqueuedAt: Date.now() });
      await until(() => consumed === 10, 20_000);
      await app.stop();
    }
    expect(Date.now() - started).to.be.below(2_500);
  });

  it("retries with backoff and gives each retry the same event id and a growing attempt number", async () => {
    const store = new MemoryStore();
    const calls: Array<{ id: string; attempt: number; at: number }> = [];
    app = new CoreApp("retry", { store, logger: silentLogger }).task(
      { source: "in", name: "flaky", retry: { attempts: 5, initialDelayMs: 40, factor: 2 } },
      async (ctx: TaskContext) => {
        calls.push({ id: ctx.eventId, attempt: ctx.attempt, at: Date.now() });
        if (ctx.attempt < 3) throw new Error(`boom ${ctx.attempt}`);
        return "ok";
      },
    );
    await app.start();
    await store.enqueue("in", { id: "e1", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    await until(() => calls.length === 3);
    expect(calls.map((c) => [c.id, c.attempt])).to.deep.equal([["e1", 1], ["e1", 2], ["e1", 3]]);
    // Delays of about 40 ms then 80 ms (±10% jitter), never sooner.
    expect(calls[1].at - calls[0].at).to.be.at.least(35);
    expect(calls[2].at - calls[1].at).to.be.at.least(70);
    await until(async () => (await store.depth("in")) === 0);
    expect(await store.deadLetters.list()).to.have.length(0);
  });

  it("keeps an event that always fails as a dead letter with its error and attempts, and replays it", async () => {
    const store = new MemoryStore();
    let fixed = false;
    const done: string[] = [];
    app = new CoreApp("dead", { store, logger: silentLogger }).task(
      { source: "in", name: "broken", retry: { attempts: 2, initialDelayMs: 5 } },
      async (ctx: TaskContext) => {
        if (!fixed) throw new Error("database is down");
        done.push(ctx.eventId);
      },
    );
    await app.start();
    await store.enqueue("in", { id: "e1", payload: { x: 1 }, attempts: 0, enqueuedAt: Date.now() });
    await until(async () => (await store.deadLetters.list()).length === 1);
    const [letter] = await store.deadLetters.list();
    expect(letter).to.include({ queue: "in", task: "broken", error: "database is down", attempts: 2 });
    expect(letter.message.payload).to.deep.equal({ x: 1 });
    fixed = true;
    expect(await store.deadLetters.replay("e1")).to.equal(true);
    await until(() => done.length === 1);
    expect(done).to.deep.equal(["e1"]);
    expect(await store.deadLetters.list()).to.have.length(0);
  });

  it("runs at most `concurrency` handlers at once", async () => {
    const store = new MemoryStore();
    let running = 0;
    let peak = 0;
    let finished = 0;
    app = new CoreApp("conc", { store, logger: silentLogger }).task({ source: "in", name: "slow", concurrency: 3 }, async () => {
      peak = Math.max(peak, ++running);
      await new Promise((r) => setTimeout(r, 10));
      running--;
      finished++;
    });
    await app.start();
    for (let i = 0; i < 20; i++) await store.enqueue("in", { id: `m${i}`, payload: i, attempts: 0, enqueuedAt: Date.now() });
    await until(() => finished === 20);
    expect(peak).to.equal(3);
  });

  it("lets running handlers finish on stop and leaves unstarted work in the store", async () => {
    const store = new MemoryStore();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const finished: string[] = [];
    const started: string[] = [];
    app = new CoreApp("drain", { store, logger: silentLogger }).task({ source: "in", name: "gated", concurrency: 1 }, async (ctx: TaskContext) => {
      started.push(ctx.eventId);
      await gate;
      finished.push(ctx.eventId);
    });
    await app.start();
    await store.enqueue("in", { id: "first", payload: 1, attempts: 0, enqueuedAt: Date.now() });
    await store.enqueue("in", { id: "second", payload: 2, attempts: 0, enqueuedAt: Date.now() });
    // The runner claims on the turn after an enqueue: stop once the first handler runs.
    await until(() => started.length === 1);
    expect(await store.depth("in")).to.equal(2);
    const stopped = app.stop({ timeoutMs: 2000 });
    setTimeout(release, 50);
    await stopped;
    expect(finished).to.deep.equal(["first"]);
    expect(await store.depth("in")).to.equal(1);
    const [left] = await store.claim("in", 10);
    expect(left.id).to.equal("second");
  });

  it("gives a task its own state scope", async () => {
    const store = new MemoryStore();
    const values: unknown[] = [];
    app = new CoreApp("state", { store, logger: silentLogger })
      .task({ source: "a", name: "writer" }, async (ctx: TaskContext) => ctx.state.set("k", "from writer"))
      .task({ source: "b", name: "reader" }, async (ctx: TaskContext) => void values.push(await ctx.state.get("k")));
    await app.start();
    await store.enqueue("a", { id: "1", payload: null, attempts: 0, enqueuedAt: Date.now() });
    await until(async () => (await store.depth("a")) === 0);
    await store.enqueue("b", { id: "2", payload: null, attempts: 0, enqueuedAt: Date.now() });
    await until(() => values.length === 1);
    expect(values).to.deep.equal([undefined]);
    expect(await app.store.state("task:writer").get("k")).to.equal("from writer");
  });
});
