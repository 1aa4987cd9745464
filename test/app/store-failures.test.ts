import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, MemoryStore, silentLogger } from "../../src/index";
import { until } from "../helpers/wait";

describe("task runner when the store cannot record an outcome", () => {
  let dir: string;
  let app: CoreApp | undefined;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "runner-store-"))));
  afterEach(async () => {
    await app?.stop();
    app = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("a result the store cannot encode is a task failure: retried with backoff, then a dead letter; the event loop stays free", async () => {
    let calls = 0;
    app = new CoreApp("unencodable", { store: "embedded", dataDir: join(dir, "data"), logger: silentLogger });
    app.task({ source: "in", emit: "out", name: "bigint", retry: { attempts: 3, initialDelayMs: 30 } }, async () => {
      calls++;
      return { n: 2n ** 70n };
    });
    app.task({ source: "out", name: "sink" }, async () => undefined);
    await app.start();
    await app.store.enqueue("in", { id: "e1", payload: {}, attempts: 0, enqueuedAt: Date.now() });
    // A timer must still fire while this goes on.
    const timerFired = new Promise<boolean>((r) => setTimeout(() => r(true), 20));
    expect(await timerFired).to.equal(true);
    await until(async () => (await app!.deadLetters.list()).length === 1);
    expect(calls).to.equal(3);
    const [letter] = await app.deadLetters.list();
    expect(letter.error).to.match(/result cannot be stored/);
    // The count follows the commit that made the letter visible by a moment.
    await until(async () => (await app!.store.depth("in")) === 0);
  });

  it("a backlog of fast tasks in the memory store leaves turns to timers", async () => {
    const store = new MemoryStore({ maxQueued: 1_000_000 });
    const total = 100_000;
    let done = 0;
    app = new CoreApp("backlog", { store, logger: silentLogger });
    app.task({ source: "in", name: "fast", concurrency: 16 }, async () => void done++);
    for (let i = 0; i < total; i++) await store.enqueue("in", { id: `m${i}`, payload: i, attempts: 0, enqueuedAt: 0 });
    // A starved event loop would not tick at all until the whole backlog is done.
    let ticks = 0;
    let ticksWhileBusy = 0;
    const interval = setInterval(() => {
      ticks++;
      if (done > 0 && done < total) ticksWhileBusy++;
    }, 1);
    try {
      await app.start();
      await until(() => done === total, 60_000);
    } finally {
      clearInterval(interval);
    }
    expect(ticks).to.be.greaterThan(0);
    expect(ticksWhileBusy).to.be.at.least(5);
  });
});
