import { expect } from "chai";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { CoreApp, silentLogger, WebhookSource } from "../../src/index";
import { closeServer, holdPort } from "../helpers/http-client";

describe("CoreApp", () => {
  it("a second start() says why it cannot: started already, stopped, or a failed start (a retry needs a new app)", async () => {
    const running = new CoreApp("twice", { store: "memory", logger: silentLogger }).task({ source: new WebhookSource({ path: "/h", host: "127.0.0.1", port: 0 }), name: "t" }, async () => undefined);
    const first = running.start();
    const again = await running.start().then(() => undefined, (e: unknown) => e as Error);
    await first;
    expect(again?.message).to.equal('CoreApp "twice" cannot start: it is started already');
    await running.stop();
    const afterStop = await running.start().then(() => undefined, (e: unknown) => e as Error);
    expect(afterStop?.message).to.equal('CoreApp "twice" cannot start: it was stopped, and an app starts once; build a new app to start again');

    const held = await holdPort(0);
    try {
      const port = (held.address() as AddressInfo).port;
      const failing = new CoreApp("fails", { store: "memory", logger: silentLogger }).task({ source: new WebhookSource({ path: "/h", host: "127.0.0.1", port }), name: "t" }, async () => undefined);
      expect((await failing.start().then(() => undefined, (e: unknown) => e as Error))?.message).to.match(/already in use/);
      const retry = await failing.start().then(() => undefined, (e: unknown) => e as Error);
      expect(retry?.message).to.equal('CoreApp "fails" cannot start: its start failed, and an app starts once; build a new app to start again');
    } finally {
      await closeServer(held);
    }
  });

  it("refuses a name that cannot name a data directory", () => {
    expect(() => new CoreApp("../etc")).to.throw(/name must be/);
    expect(() => new CoreApp("")).to.throw(/name must be/);
    // ".." put data.mdb, lock.mdb and journal/ beside the project's sources; "." into .data itself.
    for (const dots of [".", "..", "..."]) expect(() => new CoreApp(dots), dots).to.throw(/name must be .*not dots alone/);
    expect(new CoreApp(".hidden-ok").name).to.equal(".hidden-ok");
  });

  it("refuses a task without a usable source or with a duplicate name; several tasks may share a queue or a source", () => {
    const app = new CoreApp("t", { logger: silentLogger });
    expect(() => app.task({ source: 42 as unknown as string }, async function bad() {})).to.throw(/source must be/);
    expect(() => app.task({ source: 42 as unknown as string }, async () => {})).to.throw(/give the task a name/);
    app.task({ source: "q", name: "one" }, async () => {});
    expect(() => app.task({ source: "q2", name: "one" }, async () => {})).to.throw(/unique/);
    app.task({ source: "q", name: "two" }, async () => {});
    const hook = new WebhookSource({ path: "/h", port: 0 });
    app.task({ source: hook, name: "three" }, async () => {});
    app.task({ source: hook, name: "four" }, async () => {});
    expect(app.tasks.map((t) => t.queue)).to.deep.equal(["q@one", "q@two", "webhook:three", "webhook:four"]);
    expect(() => app.task({ source: hook, name: "five", filter: 1 as unknown as () => boolean }, async () => {})).to.throw(/filter must be a function/);
    expect(() => app.task({ source: "bad queue name!", name: "five" }, async () => {})).to.throw(/queue name/);
    expect(() => app.task({ source: "q9", name: "six", concurrency: 0 }, async () => {})).to.throw(/concurrency/);
    expect(() => app.task({ source: "q9", name: "seven", retry: { attempts: 0 } }, async () => {})).to.throw(/retry.attempts/);
  });

  it("refuses tasks added after start, and a second start", async () => {
    const app = new CoreApp("late", { store: "memory", logger: silentLogger });
    app.task({ source: "q", name: "t" }, async () => {});
    await app.start();
    try {
      expect(() => app.task({ source: "q2", name: "u" }, async () => {})).to.throw(/before start/);
      let error: unknown;
      await app.start().catch((e: unknown) => (error = e));
      expect(String(error)).to.match(/started already/);
    } finally {
      await app.stop();
    }
  });

  it("refuses bad WebhookSource options with a message naming the option", () => {
    expect(() => new WebhookSource({ path: "hooks" })).to.throw(/path must be/);
    expect(() => new WebhookSource({ path: "/ho\u0000oks" })).to.throw(/path must be printable ASCII/);
    expect(() => new WebhookSource({ path: "/h", port: 70000 })).to.throw(/port must be/);
    expect(() => new WebhookSource({ path: "/h", port: 1.5 })).to.throw(/port must be/);
    expect(() => new WebhookSource({ path: "/h", methods: [] })).to.throw(/methods/);
    expect(() => new WebhookSource({ path: "/h", methods: ["PO ST" as "POST"] })).to.throw(/methods/);
    // Typed as method names; a JavaScript caller (or a cast) still gets a did-you-mean.
    expect(() => new WebhookSource({ path: "/h", methods: ["PSOT" as "POST"] })).to.throw('"PSOT" is not an HTTP method (did you mean "POST"?)');
    expect(() => new WebhookSource({ path: "/h", methods: ["BREW" as "GET"] })).to.throw(/"BREW" is not an HTTP method; use GET, HEAD/);
    expect(() => new WebhookSource({ path: "/h", parser: "xml" as "json" })).to.throw(/parser must be one of/);
    expect(() => new WebhookSource({ path: "/h", ack: "never" as "received" })).to.throw(/ack must be one of/);
    expect(() => new WebhookSource({ path: "/h", maxBodyBytes: 0 })).to.throw(/maxBodyBytes/);
  });

  it("check() finds two sources on one method and path before anything listens", () => {
    const app = new CoreApp("dup", { logger: silentLogger })
      .task({ source: new WebhookSource({ path: "/same", port: 0 }), name: "a" }, async () => {})
      .task({ source: new WebhookSource({ path: "/same/", port: 0, methods: ["PUT", "POST"] }), name: "b" }, async () => {});
    expect(() => app.check()).to.throw(/POST \/same is claimed by both .*task "a".* and .*task "b"/);
    // A failed check leaves the sources attachable.
    expect(() => app.check()).to.throw(/claimed by both/);
  });

  it("refuses a task name that cannot name a queue", () => {
    const app = new CoreApp("names", { logger: silentLogger });
    expect(() => app.task({ source: "q", name: "x".repeat(201) }, async () => {})).to.throw(/task name is 1-200/);
    expect(() => app.task({ source: "q", name: "has space" }, async () => {})).to.throw(/task name is 1-200/);
  });

  it("stop() called while start() is under way waits for it and then stops: nothing keeps listening", async () => {
    const source = new WebhookSource({ path: "/s", port: 0 });
    const app = new CoreApp("racing", { store: "memory", logger: silentLogger }).task({ source, name: "t" }, async () => {});
    const started = app.start();
    const stopped = app.stop();
    await started;
    const port = source.port;
    expect(port).to.be.greaterThan(0);
    await stopped;
    expect(app.running).to.equal(false);
    let refused = false;
    await fetch(`http://127.0.0.1:${port}/s`, { method: "POST", body: "x" }).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });

  it("stop() before start() and twice is harmless: nothing opened, nothing left listening, and the app stays stopped", async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), "idle-")), "data");
    const signals = [process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")];
    const source = new WebhookSource({ path: "/h", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("idle", { logger: silentLogger, store: "embedded", dataDir });
    app.task({ source, name: "t" }, async () => {});
    expect(await app.stop()).to.equal(undefined);
    expect(await app.stop()).to.equal(undefined);
    expect(existsSync(dataDir), "the store was never opened").to.equal(false);
    expect(source.port, "no listener was bound").to.equal(0);
    expect([process.listenerCount("SIGINT"), process.listenerCount("SIGTERM")]).to.deep.equal(signals);
    const readiness = app.readiness();
    expect(readiness.ready).to.equal(false);
    expect(readiness.checks.started.ok).to.equal(false);
    expect(readiness.checks.store).to.deep.equal({ ok: false, detail: "not open" });
    expect(readiness.checks.notShuttingDown.ok).to.equal(false);
    expect(() => app.express("127.0.0.1", 0), "no routes can be added to a stopped app").to.throw();
    let refused: unknown;
    await app.start().catch((error: unknown) => (refused = error));
    expect(String(refused)).to.contain('CoreApp "idle"');
    expect(existsSync(dataDir), "a stopped app does not start").to.equal(false);
  });

  it("stop() twice after start() shares one stop, and the port is closed after it", async () => {
    const source = new WebhookSource({ path: "/h", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("twice", { logger: silentLogger, store: "memory" });
    app.task({ source, name: "t" }, async () => {});
    await app.start();
    const url = source.url;
    expect((await fetch(url, { method: "POST", body: "x" })).status).to.equal(202);
    const first = app.stop();
    const second = app.stop();
    expect(second).to.equal(first);
    expect(await second).to.equal(undefined);
    expect(app.readiness().checks.notShuttingDown.ok).to.equal(false);
    let failure: unknown;
    await fetch(url, { method: "POST", body: "x" }).catch((error: unknown) => (failure = error));
    expect(failure, "nothing listens after stop").to.be.instanceOf(Error);
  });
});
