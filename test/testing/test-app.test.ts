import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { BearerAuth, CoreApp, Queue, silentLogger, WebhookResponse, WebhookSource, type WebhookEvent } from "../../src/index";
import { testApp } from "../../src/testing/index";

interface Total {
  order: string;
  total: number;
}

/** The app under test, built fresh for each test (an app starts once). */
function ordersApp(port = 8080) {
  const hook = new WebhookSource({ path: "/hooks/orders", port, auth: new BearerAuth("tok") });
  const totals = new Queue<Total>("totals");
  const app = new CoreApp("kit-orders", { logger: silentLogger }); // default store: embedded; testApp swaps in memory
  const recorded: Total[] = [];
  app.task({ source: hook, emit: totals }, async (ctx, event: WebhookEvent<{ id: string; lines: number[] }>) => {
    if (event.body.id === "boom") throw new Error("cannot total");
    return { order: event.body.id, total: event.body.lines.reduce((a, b) => a + b, 0) };
  });
  app.task({ source: totals }, async (ctx, total) => {
    recorded.push(total);
    return `recorded ${total.order}`;
  });
  return { app, hook, totals, recorded };
}

describe("testing: testApp runs a request through the whole pipeline", () => {
  it("answers, stores, runs the task and reports the event, the result and what was emitted", async () => {
    const { app, hook } = ordersApp();
    const t = await testApp(app);
    try {
      expect(app.store.engine).to.equal("memory");
      const run = await t.send(hook, { body: { id: "o-1", lines: [2, 3] }, headers: { authorization: "Bearer tok" } });
      expect(run.status).to.equal(202);
      expect(run.body).to.deep.include({ accepted: true });
      expect(run.event?.body).to.deep.equal({ id: "o-1", lines: [2, 3] });
      expect(run.event?.headers["content-type"]).to.equal("application/json");
      expect(run.result).to.deep.equal({ order: "o-1", total: 5 });
      expect(run.emitted).to.deep.equal({ order: "o-1", total: 5 });
      expect(run.error).to.equal(undefined);
    } finally {
      await t.stop();
    }
  });

  it("a refused request makes no event; a failing task reports its error", async () => {
    const { app, hook } = ordersApp();
    const t = await testApp(app);
    try {
      const refused = await t.send(hook, { body: { id: "o-2", lines: [] } });
      expect(refused.status).to.equal(401);
      expect(refused.body).to.deep.include({ error: "unauthorized" });
      expect(refused.event).to.equal(undefined);
      const failed = await t.send(hook, { body: { id: "boom", lines: [] }, headers: { authorization: "Bearer tok" } });
      expect(failed.status).to.equal(202);
      expect((failed.error as Error).message).to.equal("cannot total");
      expect(failed.emitted).to.equal(undefined);
    } finally {
      await t.stop();
    }
  });

  it("push() feeds a queue's task directly, typed by the Queue", async () => {
    const { app, totals, recorded } = ordersApp();
    const t = await testApp(app);
    try {
      const run = await t.push(totals, { order: "o-3", total: 9 });
      expect(run.result).to.equal("recorded o-3");
      expect(recorded).to.deep.equal([{ order: "o-3", total: 9 }]);
      let error: unknown;
      await t.push("nobody-reads-this", 1).catch((e: unknown) => (error = e));
      expect(String(error)).to.contain('no task of app "kit-orders" consumes queue "nobody-reads-this"');
    } finally {
      await t.stop();
    }
  });

  it("names a paused task as the reason a run did not come, and a second start of one app as a fresh app's job", async () => {
    const { app, hook, totals } = ordersApp();
    const t = await testApp(app, { timeoutMs: 300 });
    try {
      const totalsTask = app.tasks.find((task) => task.input === "totals")!.name;
      await app.pause(totalsTask);
      let error: unknown;
      await t.push(totals, { order: "o-4", total: 1 }).catch((e: unknown) => (error = e));
      expect(String(error)).to.contain(`testApp: task "${totalsTask}" is paused, so it did not run event`).and.contain(`app.resume("${totalsTask}") lets it run`);
      const hookTask = app.tasks.find((task) => task.source === hook)!.name;
      await app.pause(hookTask);
      error = undefined;
      await t.send(hook, { body: { id: "o-5", lines: [1] }, headers: { authorization: "Bearer tok" } }).catch((e: unknown) => (error = e));
      expect(String(error)).to.contain(`testApp: task "${hookTask}" is paused`);
      error = undefined;
      await testApp(app).catch((e: unknown) => (error = e));
      expect(String(error)).to.contain('testApp: app "kit-orders" was started already (by an earlier testApp or app.start()); an app starts once, so build a fresh app for each test');
    } finally {
      await t.stop();
    }
  });

  it("send, deliver, push and drain after stop() say the app was stopped, at once (not a bare \"fetch failed\")", async () => {
    const { app, hook, totals } = ordersApp();
    const t = await testApp(app);
    await t.stop();
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["send", () => t.send(hook, { body: { id: "o-9", lines: [1] } })],
      ["deliver", () => t.deliver(hook, { body: { id: "o-9", lines: [1] } })],
      ["push", () => t.push(totals, { order: "o-9", total: 1 })],
      ["drain", () => t.drain()],
    ];
    for (const [method, call] of calls) {
      const error = await call().then(() => undefined, (e: unknown) => e);
      expect(String(error)).to.contain(`testApp.${method}: app "kit-orders" was stopped (t.stop()); start a fresh app with testApp`);
    }
    await t.stop(); // a second stop is harmless
  });

  it("refuses what is not an app, and a timeout that is not a positive number, in its own words (a JavaScript test has no types to stop it)", async () => {
    const error = await testApp(undefined as unknown as CoreApp).then(() => undefined, (e: unknown) => e);
    expect(String(error)).to.contain("testApp: the first argument must be a CoreApp, got undefined");
    for (const timeoutMs of [-1, 0, Number.NaN]) {
      const refused = await testApp(ordersApp().app, { timeoutMs }).then(() => undefined, (e: unknown) => e);
      expect(String(refused), String(timeoutMs)).to.contain(`testApp: timeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
    }
  });

  it("drain() waits for the whole chain, the emitted value's task included, and names what a paused task holds", async () => {
    const { app, hook, recorded } = ordersApp();
    const t = await testApp(app, { timeoutMs: 500 });
    try {
      for (let n = 0; n < 5; n++) await t.send(hook, { body: { id: `o-${n}`, lines: [n] }, headers: { authorization: "Bearer tok" } });
      await t.drain();
      expect(recorded.map((r) => r.order).sort()).to.deep.equal(["o-0", "o-1", "o-2", "o-3", "o-4"]);
      const totalsTask = app.tasks.find((task) => task.input === "totals")!;
      await app.pause(totalsTask.name);
      await t.send(hook, { body: { id: "o-held", lines: [1] }, headers: { authorization: "Bearer tok" } });
      let error: unknown;
      await t.drain().catch((e: unknown) => (error = e));
      expect(String(error)).to.contain(`testApp.drain: queues still hold messages after 500 ms: ${totalsTask.queue}: 1 (task "${totalsTask.name}" is paused)`);
      await app.resume(totalsTask.name);
      await t.drain();
      expect(recorded.map((r) => r.order)).to.include("o-held");
    } finally {
      await t.stop();
    }
  });

  it("push() hands the task what an emitting task would: the stored form, with the task's ordering key computed", async () => {
    const app = new CoreApp("kit-push-form", { logger: silentLogger });
    const items = new Queue<{ key: string; tags: Map<string, number> }>("items");
    const keyed: string[] = [];
    let received: unknown;
    app.task(
      {
        source: items,
        orderingKey: (value) => {
          keyed.push(value.key);
          if (value.key === "bad") throw new Error("no key for you");
          return value.key;
        },
      },
      async (_ctx, value) => {
        received = value;
      },
    );
    const t = await testApp(app);
    try {
      await t.push(items, { key: "k1", tags: new Map([["a", 1]]) });
      // In production a Map arrives as a plain object (payload-codec), whatever the engine.
      expect(received).to.deep.equal({ key: "k1", tags: { a: 1 } });
      expect(keyed).to.deep.equal(["k1"]);
      let error: unknown;
      await t.push(items, { key: "bad", tags: new Map() }).catch((e: unknown) => (error = e));
      expect(String(error)).to.contain("orderingKey threw: no key for you");
    } finally {
      await t.stop();
    }
  });

  it("listens on a free port even when the configured one is taken, and sends in parallel safely", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const taken = (blocker.address() as { port: number }).port;
    const { app, hook } = ordersApp(taken);
    const t = await testApp(app);
    try {
      expect(hook.port).to.not.equal(taken);
      const runs = await Promise.all([1, 2, 3, 4].map((n) => t.send(hook, { body: { id: `p-${n}`, lines: [n] }, headers: { authorization: "Bearer tok" } })));
      expect(runs.map((r) => r.emitted)).to.deep.equal([1, 2, 3, 4].map((n) => ({ order: `p-${n}`, total: n })));
    } finally {
      await t.stop();
      blocker.close();
    }
  });

  it("works with a custom response that hides the event id, and refuses a source of another app", async () => {
    const hook = new WebhookSource({ path: "/custom", port: 0, response: new WebhookResponse({ status_code: 200, body: "thanks" }) });
    const app = new CoreApp("kit-custom", { logger: silentLogger });
    app.task({ source: hook }, async (ctx, event: WebhookEvent<string>) => event.body.toUpperCase());
    const t = await testApp(app);
    try {
      const run = await t.send(hook, { body: "hi", headers: { "content-type": "text/plain" } });
      expect([run.status, run.body, run.result]).to.deep.equal([200, "thanks", "HI"]);
      let error: unknown;
      await t.send(new WebhookSource({ path: "/other", port: 0 })).catch((e: unknown) => (error = e));
      expect(String(error)).to.contain('feeds no task of app "kit-custom"');
    } finally {
      await t.stop();
    }
  });

  it("app.express() after start is a clear error, not a route that never answers", async () => {
    const { app } = ordersApp();
    app.express("127.0.0.1", 8080).get("/health", (_req, res) => void res.send("ok"));
    const t = await testApp(app);
    try {
      expect(() => app.express("127.0.0.1", 8080)).to.throw("app.express() is for adding routes and middleware before start()");
      expect(() => app.configureForTest({ store: "memory" })).to.throw("must come before start()");
    } finally {
      await t.stop();
    }
  });

  it("the README's node:test example passes when run by node --test, with GH_SECRET set as the README's command does", async () => {
    const file = join(__dirname, "../../samples/readme/github-push.test.js");
    const { GH_SECRET: _unset, ...env } = process.env;
    const { stdout } = await promisify(execFile)(process.execPath, ["--test", file], { env: { ...env, GH_SECRET: "test-secret", WEBHOOK_TASKS_LOG_LEVEL: "warn" } });
    expect(stdout).to.match(/# pass 1\b/);
    expect(stdout).to.match(/# fail 0\b/);
    // Without it the app does not start on a guessed secret: it names the likely cause.
    const unset = await promisify(execFile)(process.execPath, ["--test", file], { env: { ...env, WEBHOOK_TASKS_LOG_LEVEL: "warn" } }).catch((error: { stdout: string }) => error);
    expect(unset.stdout).to.match(/# fail 1\b/).and.contain("GitHubSignature: the secret is undefined: is the environment variable that should hold it unset?");
  });
});
