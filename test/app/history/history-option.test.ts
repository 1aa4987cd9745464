import { expect } from "chai";
import { CoreApp, MemoryStore, silentLogger } from "../../../src/index";
import { Collector, sleep, useApps, webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { recordingLogger, rejection, until, type LogLine } from "../../helpers/wait";

describe("the history option", () => {
  const newApp = useApps();

  it("history: false records nothing, and app.events says the history is off", async () => {
    const store = new MemoryStore();
    const app = newApp(undefined, { store, history: false });
    const hook = webhook({ path: "/off" });
    const got = new Collector();
    app.task({ source: hook, name: "t" }, got.handler);
    await app.start();
    const id = (await postJson(hook.url, { n: 1 })).json<{ id: string }>().id;
    await got.waitFor(1);
    await sleep(50);
    await store.history.flush();
    expect((await store.history.size()).events).to.equal(0);
    const calls: Array<() => Promise<unknown>> = [() => app.events.list(), () => app.events.get(id), () => app.events.replay(id), () => app.events.replay({}, { dryRun: true })];
    for (const call of calls) {
      const err = await rejection(call());
      expect(err.message).to.match(/the event history is off for app "test-\d+" \(history: false\)/);
    }
    // Pausing does not need the history.
    await app.pause("t");
    expect(await app.paused()).to.deep.equal(["t"]);
  });

  it("says so when the store keeps no history and no pauses (a store of your own)", async () => {
    const inner = new MemoryStore();
    const bare = Object.assign(Object.create(inner) as MemoryStore, { history: undefined, pauses: undefined });
    const lines: LogLine[] = [];
    const app = newApp(undefined, { store: bare, logger: recordingLogger(lines) });
    const hook = webhook({ path: "/bare" });
    const got = new Collector();
    app.task({ source: hook, name: "t" }, got.handler);
    await app.start();
    await postJson(hook.url, { n: 1 });
    await got.waitFor(1);
    expect(lines.some((l) => /keeps no event history/.test(l.msg))).to.equal(true);
    expect((await rejection(app.events.list())).message).to.match(/app\.events: the memory store keeps no event history/);
    expect((await rejection(app.pause("t"))).message).to.match(/app\.pause\(\): the memory store keeps no paused tasks/);
    expect(await app.paused()).to.deep.equal([]);
  });

  it("refuses bad values with what they take", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ retainMs: 0 }, /history\.retainMs must be a whole number of milliseconds >= 1/],
      [{ retainMs: 1.5 }, /history\.retainMs/],
      [{ retainMs: "7d" }, /history\.retainMs/],
      [{ maxEvents: 0 }, /history\.maxEvents must be an integer >= 1, got 0/],
      [{ maxEvents: -5 }, /history\.maxEvents/],
      [{ retain: 1000 }, /history\.retain is not an option \(did you mean "retainMs"\?\)/],
      ["yes", /history must be false \(no history\), true or \{ retainMs\?, maxEvents\? \}/],
      [[], /history must be false/],
    ];
    for (const [history, message] of cases) {
      expect(() => new CoreApp("bad", { store: "memory", logger: silentLogger, history: history as never }), JSON.stringify(history)).to.throw(TypeError, message);
    }
    expect(() => new CoreApp("good", { store: "memory", logger: silentLogger, history: { retainMs: 1_000, maxEvents: 10 } })).to.not.throw();
    expect(() => new CoreApp("on", { store: "memory", logger: silentLogger, history: true })).to.not.throw();
  });

  it("refuses app.events before start", async () => {
    const app = newApp();
    app.task({ source: webhook(), name: "t" }, () => undefined);
    const err = await rejection(app.events.list());
    expect(err.message).to.match(/the store is open only between start\(\) and stop\(\)/);
  });

  it("prunes in the background: with a short retention under steady load, the history stays flat", async function () {
    this.timeout(20_000);
    const store = new MemoryStore();
    const app = newApp(undefined, { store, history: { retainMs: 300 } });
    const hook = webhook({ path: "/load" });
    const got = new Collector();
    app.task({ source: hook, name: "t" }, got.handler);
    await app.start();
    const sizes: number[] = [];
    const end = Date.now() + 2_500;
    let sent = 0;
    while (Date.now() < end) {
      // About 200 events a second, in small bursts.
      await Promise.all(Array.from({ length: 10 }, (_, n) => postJson(hook.url, { n: sent + n })));
      sent += 10;
      await sleep(50);
      sizes.push((await store.history.size()).events);
    }
    // Past the first retention, what is kept never exceeds what a retention and a prune interval hold.
    const settledSizes = sizes.slice(Math.floor(sizes.length / 3));
    const rate = sent / 2.5;
    expect(Math.max(...settledSizes), `sizes ${settledSizes.join(",")}`).to.be.below(Math.ceil(rate * (0.3 + 0.03) * 2) + 20);
    expect(sent).to.be.greaterThan(100);
    await until(async () => (await store.history.size()).events === 0, 3_000);
  });

  it("bounds the count with maxEvents, oldest first", async () => {
    const app = newApp(undefined, { store: "memory", history: { retainMs: 60_000, maxEvents: 5 } });
    const hook = webhook({ path: "/max" });
    const got = new Collector();
    app.task({ source: hook, name: "t" }, got.handler);
    await app.start();
    const store = app.store as MemoryStore;
    const ids: string[] = [];
    for (let n = 0; n < 12; n++) {
      ids.push((await postJson(hook.url, { n })).json<{ id: string }>().id);
      // Events of one millisecond are ordered by id: a tick between them keeps arrival order.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await got.waitFor(12);
    // The memory store's own bound (with a tenth of slack, at least one) keeps the newest.
    await until(async () => (await store.history.size()).events <= 6);
    const kept = (await app.events.list()).events.map((e) => e.id);
    expect(kept.slice(0, 5)).to.deep.equal(ids.slice(7).reverse());
    // The pruner's cut is exact.
    await store.history.prune(0, 5);
    expect((await app.events.list()).events.map((e) => e.id)).to.deep.equal(ids.slice(7).reverse());
  });

  it("gives the memory store a bound of 10,000 events by default", async () => {
    const app = newApp();
    app.task({ source: webhook(), name: "t" }, () => undefined);
    await app.start();
    const history = (app.store as MemoryStore).history;
    for (let i = 0; i < 12_000; i++) history.noteEvent({ id: `e${i}`, origin: { kind: "webhook", source: "x" }, receivedAt: Date.now(), deliveries: [], payload: i });
    await history.flush();
    await until(async () => (await history.size()).events <= 10_000, 10_000);
  });
});
