import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, createApp, Module, silentLogger, Task, type CoreAppOptions, type TaskContext, type WebhookEvent } from "../../src/index";
import { boundedKey, MAX_ORDERING_KEY_BYTES } from "../../src/app/ordering-key";
import { sleep, webhook } from "../helpers/app";
import { postJson } from "../helpers/http-client";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

interface Body {
  readonly key: string;
  readonly n: number;
}

/** Records, per key, the order handlers start in and whether two ever overlap. */
class KeyWatch {
  readonly started = new Map<string, number[]>();
  readonly running = new Map<string, number>();
  overlaps = 0;
  maxParallelKeys = 0;
  total = 0;

  async run(key: string, n: number, work: () => Promise<void>): Promise<void> {
    if ((this.running.get(key) ?? 0) > 0) this.overlaps++;
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    this.maxParallelKeys = Math.max(this.maxParallelKeys, [...this.running.values()].filter((c) => c > 0).length);
    try {
      await work();
    } finally {
      this.running.set(key, this.running.get(key)! - 1);
    }
    const order = this.started.get(key) ?? [];
    order.push(n);
    this.started.set(key, order);
    this.total++;
  }
}

for (const engine of ["memory", "embedded"] as const) {
  describe(`ordering keys through a WebhookSource (${engine})`, function () {
    this.timeout(60_000);
    const apps: CoreApp[] = [];
    const dirs: string[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    });
    function makeApp(options: CoreAppOptions = {}): CoreApp {
      const dir = mkdtempSync(join(tmpdir(), "ordering-app-"));
      dirs.push(dir);
      const app = new CoreApp("ordering", { store: engine, dataDir: dir, logger: silentLogger, ...options });
      apps.push(app);
      return app;
    }

    it("runs the events of one key one at a time in the order they were accepted, and keys in parallel", async () => {
      const app = makeApp();
      const source = webhook();
      const watch = new KeyWatch();
      app.task<WebhookEvent<Body>>(
        { source, name: "ordered", concurrency: 16, orderingKey: (e) => e.body.key },
        async (_ctx, event) => watch.run(event.body.key, event.body.n, () => sleep(Math.random() * 4)),
      );
      await app.start();
      const KEYS = 20;
      const PER_KEY = 30;
      // One sender per key, each waiting for the answer before its next event: per key, the
      // order of acceptance is the order sent; across keys, events interleave.
      await Promise.all(
        Array.from({ length: KEYS }, async (_, k) => {
          for (let n = 0; n < PER_KEY; n++) {
            const reply = await postJson(source.url, { key: `key-${k}`, n });
            expect(reply.status).to.equal(202);
          }
        }),
      );
      await until(() => watch.total === KEYS * PER_KEY, 30_000);
      expect(watch.overlaps).to.equal(0);
      for (let k = 0; k < KEYS; k++) expect(watch.started.get(`key-${k}`)).to.deep.equal(Array.from({ length: PER_KEY }, (_, n) => n));
      expect(watch.maxParallelKeys).to.be.greaterThan(1);
    });

    it("claims the next event of a key as soon as the one before it is done, not at the next poll", async () => {
      const app = makeApp();
      const done: number[] = [];
      app.task<Body>({ source: "in", name: "ordered", concurrency: 16, orderingKey: (value) => value.key }, async (_ctx, value) => {
        await sleep(1);
        done.push(value.n);
      });
      await app.start();
      // Every claim asks for 16 and gets 1: the runner must not take that for an empty queue.
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 40 }, (_, n) => app.store.enqueue("in", { id: `e${n}`, payload: { key: "k", n }, attempts: 0, enqueuedAt: Date.now(), orderingKey: "k" })),
      );
      await until(() => done.length === 40, 10_000);
      expect(done).to.deep.equal(Array.from({ length: 40 }, (_, n) => n));
      // The runner's fallback poll is once a second: 40 events waiting for it would take 40 s.
      expect(Date.now() - started).to.be.below(3_000);
    });

    it("holds back only the key of a failing event, until it succeeds on a retry; then the rest of that key follows", async () => {
      const app = makeApp();
      const source = webhook();
      const done: string[] = [];
      let failures = 0;
      app.task<WebhookEvent<Body>>(
        { source, name: "ordered", orderingKey: (e) => e.body.key, retry: { attempts: 5, initialDelayMs: 150, factor: 1 } },
        async (_ctx, event) => {
          const { key, n } = event.body;
          if (key === "a" && n === 1 && failures < 2) {
            failures++;
            throw new Error("not yet");
          }
          done.push(`${key}${n}`);
        },
      );
      await app.start();
      for (const [key, n] of [["a", 1], ["a", 2], ["b", 1], ["a", 3], ["b", 2], ["b", 3]] as const) {
        expect((await postJson(source.url, { key, n })).status).to.equal(202);
      }
      await until(() => done.length === 3);
      expect(done).to.deep.equal(["b1", "b2", "b3"]);
      await until(() => done.length === 6, 5_000);
      expect(done.slice(3)).to.deep.equal(["a1", "a2", "a3"]);
      expect(failures).to.equal(2);
    });

    it("lets the rest of a key go once its failing event becomes a dead letter; a replay runs after them", async () => {
      const app = makeApp();
      const source = webhook();
      const done: string[] = [];
      let broken = true;
      app.task<WebhookEvent<Body>>(
        { source, name: "ordered", orderingKey: (e) => e.body.key, retry: { attempts: 2, initialDelayMs: 20 } },
        async (_ctx, event) => {
          const { key, n } = event.body;
          if (n === 1 && broken) throw new Error("broken");
          done.push(`${key}${n}`);
        },
      );
      await app.start();
      for (const n of [1, 2, 3]) expect((await postJson(source.url, { key: "a", n })).status).to.equal(202);
      await until(() => done.length === 2);
      expect(done).to.deep.equal(["a2", "a3"]);
      const [letter] = await app.deadLetters.list();
      expect(letter!.message.orderingKey).to.equal("a");
      broken = false;
      await app.deadLetters.replay(letter!.message.id);
      await until(() => done.length === 3);
      expect(done).to.deep.equal(["a2", "a3", "a1"]);
    });

    it("keeps the order of emitted values by the consuming task's key", async () => {
      const app = makeApp();
      const source = webhook();
      const watch = new KeyWatch();
      // One at a time, so it emits in the order events were accepted.
      app.task<WebhookEvent<Body>>({ source, name: "receive", emit: "work", concurrency: 1 }, async (_ctx, event) => event.body);
      app.task<Body>({ source: "work", name: "work", concurrency: 8, orderingKey: (value) => value.key }, async (_ctx, value) =>
        watch.run(value.key, value.n, () => sleep(Math.random() * 3)),
      );
      await app.start();
      await Promise.all(
        ["x", "y", "z"].map(async (key) => {
          for (let n = 0; n < 10; n++) {
            expect((await postJson(source.url, { key, n })).status).to.equal(202);
          }
        }),
      );
      await until(() => watch.total === 30, 10_000);
      expect(watch.overlaps).to.equal(0);
      for (const key of ["x", "y", "z"]) expect(watch.started.get(key)).to.deep.equal(Array.from({ length: 10 }, (_, n) => n));
    });
  });
}

describe("ordering keys: a key function that fails", function () {
  this.timeout(20_000);
  const apps: CoreApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
  });

  for (const [what, orderingKey] of [
    ["throws", (e: WebhookEvent<Body>) => (e.body.key === "bad" ? (null as unknown as { x: string }).x : e.body.key)],
    ["returns a number", (e: WebhookEvent<Body>) => (e.body.key === "bad" ? (42 as unknown as string) : e.body.key)],
    ["returns a Promise", (e: WebhookEvent<Body>) => (e.body.key === "bad" ? (Promise.resolve("k") as unknown as string) : e.body.key)],
  ] as const) {
    for (const ack of ["persisted", "received"] as const) {
      it(`refuses the webhook with 500 ordering_key_failed and stores nothing when it ${what} (ack "${ack}")`, async () => {
        const lines: LogLine[] = [];
        const app = new CoreApp(`bad-key-${ack}`, { store: "memory", logger: recordingLogger(lines) });
        apps.push(app);
        const source = webhook({ ack });
        const done: number[] = [];
        app.task<WebhookEvent<Body>>({ source, name: "ordered", orderingKey }, async (_ctx, event) => void done.push(event.body.n));
        await app.start();
        const refused = await postJson(source.url, { key: "bad", n: 1 });
        expect(refused.status).to.equal(500);
        expect(refused.json()).to.deep.include({ error: "ordering_key_failed" });
        expect(await app.store.depth("webhook:ordered")).to.equal(0);
        const error = lines.find((l) => l.msg.includes("ordering key"));
        expect(error?.fields?.error).to.match(/task "ordered": orderingKey (threw|returned)/);
        // Other events still go through.
        expect((await postJson(source.url, { key: "good", n: 2 })).status).to.equal(202);
        await until(() => done.length === 1);
        expect(done).to.deep.equal([2]);
      });
    }
  }

  it("refuses with 500 and no duplicate marker when the source deduplicates, so the sender's retry is stored", async () => {
    const app = new CoreApp("bad-key-dedupe", { store: "memory", logger: silentLogger });
    apps.push(app);
    const source = webhook({ dedupe: { header: "x-delivery" } });
    let fixed = false;
    const done: number[] = [];
    app.task<WebhookEvent<Body>>(
      {
        source,
        name: "ordered",
        orderingKey: (e) => {
          if (!fixed) throw new Error("no key yet");
          return e.body.key;
        },
      },
      async (_ctx, event) => void done.push(event.body.n),
    );
    await app.start();
    const first = await postJson(source.url, { key: "k", n: 1 }, { "x-delivery": "d1" });
    expect(first.status).to.equal(500);
    expect(first.json()).to.deep.include({ error: "ordering_key_failed" });
    fixed = true;
    const retry = await postJson(source.url, { key: "k", n: 1 }, { "x-delivery": "d1" });
    expect(retry.status).to.equal(202);
    await until(() => done.length === 1);
  });

  it("fails the emitting task when the key of its emitted value cannot be computed: retried, then a dead letter; nothing is emitted", async () => {
    const app = new CoreApp("bad-emit-key", { store: "memory", logger: silentLogger });
    apps.push(app);
    const source = webhook();
    const consumed: unknown[] = [];
    app.task<WebhookEvent<Body>>({ source, name: "receive", emit: "work", retry: { attempts: 2, initialDelayMs: 10 } }, async (_ctx, event) => event.body);
    app.task<Body>(
      {
        source: "work",
        name: "work",
        orderingKey: (value) => {
          throw new Error(`cannot key ${value.key}`);
        },
      },
      async (_ctx, value) => void consumed.push(value),
    );
    await app.start();
    expect((await postJson(source.url, { key: "k", n: 1 })).status).to.equal(202);
    await until(async () => (await app.deadLetters.list()).length === 1);
    const [letter] = await app.deadLetters.list();
    expect(letter).to.include({ task: "receive", attempts: 2 });
    expect(letter!.error).to.equal('task "work": orderingKey threw: cannot key k');
    expect(await app.store.depth("work")).to.equal(0);
    expect(consumed).to.deep.equal([]);
  });
});

describe("ordering keys: registration and keys", () => {
  it("refuses an orderingKey that is not a function", () => {
    const app = new CoreApp("bad-option", { store: "memory", logger: silentLogger });
    const options = { source: "in", name: "t", orderingKey: "body.id" } as unknown as { source: string; name: string };
    expect(() => app.task(options, async () => undefined)).to.throw(TypeError, 'task "t": orderingKey must be a function');
  });

  it("is accepted by @Task, typed by the method's event", async () => {
    const source = webhook();
    const done: string[] = [];
    class Handlers {
      @Task<WebhookEvent<Body>>({ source, name: "ordered", orderingKey: (e) => e.body.key })
      async handle(_ctx: TaskContext, event: WebhookEvent<Body>): Promise<void> {
        done.push(`${event.body.key}${event.body.n}`);
      }
    }
    @Module({ name: "decorated-ordering", handlers: [Handlers], store: "memory", logger: silentLogger })
    class AppModule {}
    const app = await createApp(AppModule).start();
    try {
      expect((await postJson(source.url, { key: "a", n: 1 })).status).to.equal(202);
      await until(() => done.length === 1);
      const letterless = await app.store.depth("webhook:ordered");
      expect(letterless).to.equal(0);
    } finally {
      await app.stop();
    }
  });

  it("keeps short keys as they are and replaces long ones by their SHA-256, equal for equal keys", () => {
    expect(boundedKey("cus_123")).to.equal("cus_123");
    const limit = "é".repeat(MAX_ORDERING_KEY_BYTES / 2);
    expect(boundedKey(limit)).to.equal(limit);
    const long = "x".repeat(MAX_ORDERING_KEY_BYTES + 1);
    expect(boundedKey(long)).to.match(/^sha256:[A-Za-z0-9_-]{43}$/);
    expect(boundedKey(long)).to.equal(boundedKey("x".repeat(MAX_ORDERING_KEY_BYTES + 1)));
    expect(boundedKey(long)).to.not.equal(boundedKey("y".repeat(MAX_ORDERING_KEY_BYTES + 1)));
    expect(boundedKey("é".repeat(MAX_ORDERING_KEY_BYTES / 2 + 1))).to.match(/^sha256:/);
  });

  it("orders events by a key far longer than a store index takes, on the embedded store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ordering-long-"));
    const app = new CoreApp("long-key", { store: "embedded", dataDir: dir, logger: silentLogger });
    const source = webhook();
    const done: number[] = [];
    app.task<WebhookEvent<Body>>({ source, name: "ordered", orderingKey: (e) => e.body.key.repeat(5_000) }, async (_ctx, event) => {
      await sleep(5);
      done.push(event.body.n);
    });
    await app.start();
    try {
      for (const n of [1, 2, 3]) expect((await postJson(source.url, { key: "k", n })).status).to.equal(202);
      await until(() => done.length === 3);
      expect(done).to.deep.equal([1, 2, 3]);
    } finally {
      await app.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
