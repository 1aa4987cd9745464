import { expect } from "chai";
import { join } from "node:path";
import type { QueuedMessage } from "../../../src/store/store";
import { keyed } from "../ordering-conformance";
import { runChild, StoreFixture } from "./store-fixture";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

const fixture = new StoreFixture("embedded-ordering-");

describe("EmbeddedStore ordering keys across restarts", function () {
  this.timeout(30_000);
  afterEach(() => fixture.cleanup());

  it("keeps a key held after a restart while its first message waits for a retry", async () => {
    const dir = join(fixture.tempDir(), "data");
    let store = await fixture.openStore({ dir });
    for (const m of [keyed("a1", "a"), keyed("a2", "a"), keyed("a3", "a"), keyed("b1", "b")]) await store.enqueue("q", m);
    const first = await store.claim("q", 10);
    expect(ids(first)).to.deep.equal(["a1", "b1"]);
    await store.retryLater("q", { ...first[0]!, attempts: 1, lastError: "boom" }, Date.now() + 400);
    await store.complete("q", "b1");
    await fixture.closeStore(store);

    store = await fixture.openStore({ dir });
    expect(await store.depth("q")).to.equal(3);
    expect(await store.claim("q", 10)).to.deep.equal([]);
    await sleep(450);
    const again = await store.claim("q", 10);
    expect(ids(again)).to.deep.equal(["a1"]);
    expect(again[0]).to.include({ attempts: 1, orderingKey: "a" });
    await store.complete("q", "a1");
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
  });

  it("hands out again after a restart only the head that was claimed and not finished", async () => {
    const dir = join(fixture.tempDir(), "data");
    let store = await fixture.openStore({ dir });
    for (const m of [keyed("a1", "a"), keyed("a2", "a")]) await store.enqueue("q", m);
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a1"]);
    await fixture.closeStore(store);

    store = await fixture.openStore({ dir });
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a1"]);
    await store.complete("q", "a1");
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a2"]);
  });

  it("puts messages enqueued after a restart behind the held-back ones of their key, and counts those", async () => {
    const dir = join(fixture.tempDir(), "data");
    let store = await fixture.openStore({ dir });
    for (const m of [keyed("a1", "a"), keyed("a2", "a"), keyed("a3", "a")]) await store.enqueue("q", m);
    await fixture.closeStore(store);

    store = await fixture.openStore({ dir });
    expect(await store.depth("q")).to.equal(3);
    await store.enqueue("q", keyed("a4", "a"));
    const order: string[] = [];
    for (let i = 0; i < 4; i++) {
      const got = await store.claim("q", 10);
      expect(got).to.have.length(1);
      order.push(...ids(got));
      await store.complete("q", got[0]!.id);
    }
    expect(order).to.deep.equal(["a1", "a2", "a3", "a4"]);
    expect(await store.depth("q")).to.equal(0);
  });

  it("keeps queue order between unkeyed messages of the journal and keyed ones, and keeps their trace context", async () => {
    const dir = join(fixture.tempDir(), "data");
    const store = await fixture.openStore({ dir });
    const traceContext = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
    for (const m of [keyed("n1", undefined, { traceContext }), keyed("a1", "a", { traceContext }), keyed("n2", undefined), keyed("a2", "a"), keyed("n3", undefined)]) {
      await store.enqueue("q", m);
    }
    const got = await store.claim("q", 10);
    expect(ids(got)).to.deep.equal(["n1", "a1", "n2", "n3"]);
    expect(got[0]!.traceContext).to.deep.equal(traceContext);
    expect(got[1]!.traceContext).to.deep.equal(traceContext);
  });

  it("keeps the trace context of a message moved from the journal into the B-tree at the next open", async () => {
    const dir = join(fixture.tempDir(), "data");
    let store = await fixture.openStore({ dir });
    const traceContext = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "x=1" };
    await store.enqueue("q", keyed("n1", undefined, { traceContext }));
    await fixture.closeStore(store);
    store = await fixture.openStore({ dir });
    const [n1] = await store.claim("q", 10);
    expect(n1!.traceContext).to.deep.equal(traceContext);
  });

  it("moves the next message of a key forward when its journal-born input emits a keyed value, with the input done once", async () => {
    const dir = join(fixture.tempDir(), "data");
    let store = await fixture.openStore({ dir });
    await store.enqueue("in", keyed("i1", undefined));
    await store.enqueue("in", keyed("i2", undefined));
    const [i1, i2] = await store.claim("in", 10);
    await store.complete("in", i1!.id, { queue: "out", message: keyed("o1", "k") });
    await store.complete("in", i2!.id, { queue: "out", message: keyed("o2", "k") });
    await fixture.closeStore(store);
    store = await fixture.openStore({ dir });
    expect(await store.depth("in")).to.equal(0);
    expect(await store.claim("in", 10)).to.deep.equal([]);
    expect(ids(await store.claim("out", 10))).to.deep.equal(["o1"]);
    await store.complete("out", "o1");
    expect(ids(await store.claim("out", 10))).to.deep.equal(["o2"]);
  });

  it("holds a dead letter replayed by another process (the CLI) behind the running head of its key", async () => {
    const dir = join(fixture.tempDir(), "data");
    const app = await fixture.openStore({ dir });
    await app.enqueue("q", keyed("d0", "a"));
    const [d0] = await app.claim("q", 10);
    await app.deadLetter({ queue: "q", task: "t", message: { ...d0!, attempts: 3 }, error: "e", attempts: 3, diedAt: 1 });
    await app.enqueue("q", keyed("a1", "a"));
    expect(ids(await app.claim("q", 10))).to.deep.equal(["a1"]);
    const script = `
      const { EmbeddedStore } = require(process.env.ENGINE);
      const cli = new EmbeddedStore({ dir: process.env.DIR, consumer: false });
      cli.open().then(() => cli.deadLetters.replay("d0")).then((done) => cli.close().then(() => process.stdout.write(String(done))));`;
    const engine = join(__dirname, "..", "..", "..", "src", "store", "embedded", "embedded-store.js");
    expect(await runChild(script, { ENGINE: engine, DIR: dir })).to.equal("true");
    await sleep(1_100); // the app rescans for other processes' work
    expect(await app.claim("q", 10)).to.deep.equal([]);
    await app.complete("q", "a1");
    const [replayed] = await app.claim("q", 10);
    expect(replayed).to.include({ id: "d0", attempts: 0, orderingKey: "a" });
  });
  it("puts events arriving after a CLI replay behind the replayed letters of their key, though the CLI numbered them past the app's counter", async () => {
    const dir = join(fixture.tempDir(), "data");
    const app = await fixture.openStore({ dir });
    for (const id of ["d1", "d2"]) {
      await app.enqueue("q", keyed(id, "a"));
      const [dead] = await app.claim("q", 10);
      await app.deadLetter({ queue: "q", task: "t", message: { ...dead!, attempts: 3 }, error: "e", attempts: 3, diedAt: Date.now() });
    }
    await app.enqueue("q", keyed("h", "a"));
    expect(ids(await app.claim("q", 10))).to.deep.equal(["h"]);
    const script = `
      const { EmbeddedStore } = require(process.env.ENGINE);
      const cli = new EmbeddedStore({ dir: process.env.DIR, consumer: false });
      cli.open()
        .then(() => cli.deadLetters.replay("d1"))
        .then(() => cli.deadLetters.replay("d2"))
        .then((done) => cli.close().then(() => process.stdout.write(String(done))));`;
    const engine = join(__dirname, "..", "..", "..", "src", "store", "embedded", "embedded-store.js");
    expect(await runChild(script, { ENGINE: engine, DIR: dir })).to.equal("true");
    // Both arrive after the replays: they must run after d1 and d2.
    await app.enqueue("q", keyed("e1", "a"));
    await app.enqueue("q", keyed("e2", "a"));
    const order: string[] = [];
    await app.complete("q", "h");
    for (let i = 0; i < 4; i++) {
      await sleep(i === 0 ? 1_100 : 0); // the first claim after another process's write may wait for the rescan
      const [next] = await app.claim("q", 10);
      expect(next, `claim ${i + 1} after ${order.join(",")}`).to.not.equal(undefined);
      order.push(next!.id);
      await app.complete("q", next!.id);
    }
    expect(order).to.deep.equal(["d1", "d2", "e1", "e2"]);
  });
});
