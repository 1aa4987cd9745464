import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedStore, type EmbeddedStoreOptions } from "../../../src/store/embedded/embedded-store";
import { StoreOpenError } from "../../../src/store/embedded/store-open-error";
import type { QueuedMessage } from "../../../src/store/store";
import { StoreRefusedError } from "../../../src/store/store-errors";
import { message, rejection, storeConformance } from "../store-conformance";
import { runChild, StoreFixture } from "./store-fixture";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);
/**
 * The start of the kill-mid-burst scripts: `writer(store, acknowledged)` enqueues forever and
 * reports each message whose enqueue resolved; `say` writes a line at once (not through the
 * pipe's buffer), so what the test reads did happen.
 */
const BURST = `
      const { EmbeddedStore } = require(process.env.ENGINE);
      const say = (line) => require("node:fs").writeSync(1, line + "\\n");
      let n = 0;
      const writer = async (store, acknowledged) => {
        for (;;) {
          const id = "m" + n++;
          await store.enqueue("q", { id, payload: { id }, raw: Buffer.alloc(200, 1), attempts: 0, enqueuedAt: Date.now() });
          acknowledged(id);
        }
      };`;
/** The compiled engine, for the child processes below. */
const ENGINE_MODULE = join(__dirname, "..", "..", "..", "src", "store", "embedded", "embedded-store.js");

const fixture = new StoreFixture("embedded-store-");
const tempDir = () => fixture.tempDir();
const openStore = (options: EmbeddedStoreOptions) => fixture.openStore(options);
const closeStore = (store: EmbeddedStore) => fixture.closeStore(store);

async function until(predicate: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(10);
  }
}


storeConformance("embedded", {
  create: (limits) => new EmbeddedStore({ dir: join(tempDir(), "data"), ...limits }),
  cleanup: () => fixture.removeDirs(),
});

describe("EmbeddedStore", function () {
  this.timeout(30_000);
  afterEach(() => fixture.cleanup());

  it("is the durable engine", () => {
    const store = new EmbeddedStore({ dir: join(tempDir(), "data") });
    expect(store.engine).to.equal("embedded");
    expect(store.durable).to.equal(true);
  });

  it("creates its directory and keeps queued messages across close and reopen, new ones after them", async () => {
    const dir = join(tempDir(), "nested", "data");
    const first = await openStore({ dir });
    for (let i = 0; i < 5; i++) await first.enqueue("q", message(`m${i}`, { i }, { raw: Buffer.from([i, 0, 255]) }));
    await first.enqueue("other", message("o1"));
    await closeStore(first);

    const second = await openStore({ dir });
    expect(await second.depth("q")).to.equal(5);
    expect(await second.depth("other")).to.equal(1);
    await second.enqueue("q", message("m5"));
    const got = await second.claim("q", 10);
    expect(ids(got)).to.deep.equal(["m0", "m1", "m2", "m3", "m4", "m5"]);
    expect(got[3]).to.deep.equal(message("m3", { i: 3 }, { raw: Buffer.from([3, 0, 255]) }));
  });

  it("keeps a __proto__ key as an own key across restarts: from the journal, the B-tree, a retry and the dead letters", async () => {
    const dir = join(tempDir(), "data");
    // JSON.parse makes "__proto__" an own key, as a webhook's body and query hold it.
    const payload = () => JSON.parse('{"query":{"__proto__":"x","a":"1"},"body":{"__proto__":{"isAdmin":true},"b":2}}') as Record<string, unknown>;
    const first = await openStore({ dir });
    for (const id of ["p1", "p2", "p3"]) await first.enqueue("q", message(id, payload()));
    const [retried] = await first.claim("q", 1);
    await first.retryLater("q", retried!, Date.now() + 400);
    await closeStore(first);

    const second = await openStore({ dir });
    const moved = await second.claim("q", 10);
    expect(ids(moved)).to.deep.equal(["p2", "p3"]);
    await second.deadLetter({ queue: "q", task: "t", message: moved[0]!, error: "failed for good", attempts: 1, diedAt: Date.now() });
    await second.complete("q", "p3");
    await closeStore(second);

    const third = await openStore({ dir });
    await sleep(450);
    const due = await third.claim("q", 10);
    expect(ids(due)).to.deep.equal(["p1"]);
    const [letter] = await third.deadLetters.list();
    for (const value of [moved[1]!.payload, due[0]!.payload, letter!.message.payload]) {
      const { query, body } = value as { query: object; body: object };
      expect(Object.keys(query)).to.deep.equal(["__proto__", "a"]);
      expect(Object.getOwnPropertyDescriptor(query, "__proto__")?.value).to.equal("x");
      expect(Object.getPrototypeOf(query)).to.equal(Object.prototype);
      expect(Object.keys(body)).to.deep.equal(["__proto__", "b"]);
      expect((body as { isAdmin?: boolean }).isAdmin).to.equal(undefined);
    }
  });

  it("counts every queue right after a restart, holes and retries included", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir });
    for (let i = 0; i < 20; i++) await first.enqueue("wide", message(`w${i}`));
    for (let i = 0; i < 3; i++) await first.enqueue("narrow", message(`n${i}`));
    const claimed = await first.claim("wide", 20);
    for (const m of claimed.filter((_, i) => i % 2 === 0)) await first.complete("wide", m.id, { queue: "emitted", message: message(`e-${m.id}`) });
    await first.retryLater("wide", claimed[1], Date.now() + 60_000);
    await first.retryLater("narrow", (await first.claim("narrow", 1))[0], Date.now() + 60_000);
    const before = { wide: await first.depth("wide"), narrow: await first.depth("narrow"), emitted: await first.depth("emitted") };
    expect(before).to.deep.equal({ wide: 10, narrow: 3, emitted: 10 });
    await closeStore(first);

    const second = await openStore({ dir });
    expect({ wide: await second.depth("wide"), narrow: await second.depth("narrow"), emitted: await second.depth("emitted") }).to.deep.equal(before);
    expect(await second.claim("wide", 100)).to.have.length(9);
  });

  it("hands out again after a restart what was claimed but not finished, and not what was finished", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir });
    for (const id of ["m1", "m2", "m3", "m4"]) await first.enqueue("q", message(id));
    expect(ids(await first.claim("q", 3))).to.deep.equal(["m1", "m2", "m3"]);
    await first.complete("q", "m2", { queue: "out", message: message("from-m2") });
    await closeStore(first); // m1 and m3 were claimed and never finished: the process "died"

    const second = await openStore({ dir });
    expect(await second.depth("q")).to.equal(3);
    expect(ids(await second.claim("q", 10))).to.deep.equal(["m1", "m3", "m4"]);
    expect(ids(await second.claim("out", 10))).to.deep.equal(["from-m2"]);
  });

  it("keeps retries with their time and dead letters across a restart", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir });
    await first.enqueue("q", message("retry-me"));
    await first.enqueue("q", message("kill-me"));
    const [retry, kill] = await first.claim("q", 2);
    const visibleAt = Date.now() + 400;
    await first.retryLater("q", { ...retry, attempts: 1, lastError: "boom" }, visibleAt);
    const letter = { queue: "q", task: "t", message: { ...kill, attempts: 3, lastError: "bad" }, error: "bad", attempts: 3, diedAt: 123 };
    await first.deadLetter(letter);
    await closeStore(first);

    const second = await openStore({ dir });
    expect(await second.depth("q")).to.equal(1);
    expect(await second.deadLetters.list()).to.deep.equal([letter]);
    if (Date.now() < visibleAt - 50) expect(await second.claim("q", 10)).to.deep.equal([]);
    await sleep(Math.max(0, visibleAt - Date.now()) + 20);
    expect(await second.claim("q", 10)).to.deep.equal([{ ...retry, attempts: 1, lastError: "boom" }]);
    expect(await second.deadLetters.replay("kill-me")).to.equal(true);
    expect(ids(await second.claim("q", 10))).to.deep.equal(["kill-me"]);
  });

  it("keeps state and its time-to-live across a restart", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir });
    const s = first.state("task:t");
    await s.set("forever", { v: 1 });
    await s.set("short", "gone soon", { ttlMs: 100 });
    await s.set("long", "stays", { ttlMs: 60_000 });
    expect(await s.setIfAbsent("marker", true)).to.equal(true);
    await closeStore(first);
    await sleep(150);

    const second = await openStore({ dir });
    const t = second.state("task:t");
    expect(await t.get("forever")).to.deep.equal({ v: 1 });
    expect(await t.get("short")).to.equal(undefined);
    expect(await t.get("long")).to.equal("stays");
    expect(await t.setIfAbsent("marker", true)).to.equal(false);
    expect(await t.setIfAbsent("short", "again")).to.equal(true);
  });

  it("sweeps expired entries, but not an entry set again since", async () => {
    const store = await openStore({ dir: join(tempDir(), "data") });
    const s = store.state("ns");
    for (let i = 0; i < 5; i++) await s.set(`k${i}`, i, { ttlMs: 30 });
    await s.set("k0", "kept"); // set again without a time-to-live
    await s.set("k1", "later", { ttlMs: 60_000 });
    await s.set("other", "no ttl");
    await sleep(60);
    expect(await store.sweepExpired()).to.equal(3);
    expect(await store.sweepExpired()).to.equal(0);
    expect(await s.get("k0")).to.equal("kept");
    expect(await s.get("k1")).to.equal("later");
    expect(await s.get("k2")).to.equal(undefined);
    expect(await s.get("other")).to.equal("no ttl");
  });

  // lmdb escapes U+0000-U+0004 in a key's strings only under 64 characters: longer, the key read
  // back from the expiry index came apart, and the sweep removed neither entry nor index key.
  it("keeps, reads and sweeps keys of 64+ characters holding U+0000-U+0004 (a deduplication id from a JSON body)", async () => {
    const store = await openStore({ dir: join(tempDir(), "data") });
    const s = store.state("dedupe:t");
    const keys = [0, 1, 2].map((i) => `${"k".repeat(70)}\u0000${i}\u0004end`);
    for (const k of keys) await s.set(k, { k }, { ttlMs: 30 });
    const stays = `${"k".repeat(70)}\u0000stays`;
    await s.set(stays, "stays", { ttlMs: 60_000 });
    expect(await s.get(keys[1])).to.deep.equal({ k: keys[1] });
    expect(await s.setIfAbsent(keys[2], "again")).to.equal(false);
    await sleep(60);
    expect(await store.sweepExpired()).to.equal(3);
    expect(await store.sweepExpired()).to.equal(0);
    expect(await s.get(keys[0])).to.equal(undefined);
    expect(await s.get(stays)).to.equal("stays");
  });

  it("refuses with store_full past maxBytes, still takes emits, and admits again once space frees", async () => {
    const store = await openStore({ dir: join(tempDir(), "data"), maxBytes: 256 * 1024 });
    const raw = Buffer.alloc(16 * 1024, 7);
    let accepted = 0;
    while (store.admit("q") === undefined && accepted < 200) {
      await store.enqueue("q", message(`m${accepted}`, null, { raw }));
      accepted++;
      await sleep(25); // the size is measured at most every 20 ms
    }
    expect(accepted).to.be.within(5, 20);
    expect(store.admit("q")).to.include({ code: "store_full" });
    expect(store.admit("another-queue")).to.include({ code: "store_full" });
    const error = await rejection(store.enqueue("q", message("refused", null, { raw })));
    expect(error).to.be.instanceOf(StoreRefusedError);
    expect((error as StoreRefusedError).refusal.code).to.equal("store_full");

    const claimed = await store.claim("q", 1000);
    expect(claimed).to.have.length(accepted);
    await store.complete("q", claimed[0].id, { queue: "out", message: message("emitted", null, { raw }) });
    for (const m of claimed.slice(1)) await store.complete("q", m.id);
    await until(() => store.admit("q") === undefined);
    await store.enqueue("q", message("after", null, { raw }));
    expect(ids(await store.claim("q", 10))).to.deep.equal(["after"]);
    expect(ids(await store.claim("out", 10))).to.deep.equal(["emitted"]);
  });

  it("open() rejects with one line naming a directory that cannot be created, holds nothing open, and opens once it can", async () => {
    const base = tempDir();
    const blocker = join(base, "blocker");
    writeFileSync(blocker, "a regular file where a directory should be");
    const store = new EmbeddedStore({ dir: join(blocker, "data"), probeIntervalMs: 50 });
    const error = await rejection(store.open());
    expect(error).to.be.instanceOf(StoreOpenError);
    expect((error as StoreOpenError).code).to.equal("store_cannot_open");
    expect((error as Error).message).to.match(new RegExp(`^cannot open the embedded store in ${join(blocker, "data")}: .*(ENOTDIR|not a directory)`));
    expect((error as Error).message).not.to.contain("\n");
    const refusal = store.admit("q");
    expect(refusal).to.include({ code: "store_unavailable" });
    expect(refusal?.message).not.to.match(/ENOTDIR|blocker/); // senders see no paths
    expect(await rejection(store.enqueue("q", message("m1")))).to.be.instanceOf(StoreRefusedError);
    expect(await rejection(store.claim("q", 1))).to.be.instanceOf(StoreRefusedError);
    expect(await rejection(store.deadLetters.list())).to.be.instanceOf(StoreRefusedError);

    rmSync(blocker);
    mkdirSync(blocker);
    await store.open();
    try {
      expect(store.failure).to.equal(undefined);
      await store.enqueue("q", message("m1"));
      expect(ids(await store.claim("q", 10))).to.deep.equal(["m1"]);
    } finally {
      await store.close();
    }
  });

  it("opens a directory whose last part has a dot (an app named shop.orders, mktemp's tmp.XXXXXXXXXX)", async () => {
    for (const name of ["shop.orders", "tmp.1d0t3jQeCo", "data.mdb"]) {
      const dir = join(tempDir(), name);
      const store = await openStore({ dir });
      expect(store.failure, name).to.equal(undefined);
      await store.enqueue("q", message(`m-${name}`));
      expect(ids(await store.claim("q", 10)), name).to.deep.equal([`m-${name}`]);
      expect(existsSync(join(dir, "data.mdb")), `${name}/data.mdb`).to.equal(true);
    }
  });

  it("refuses before it is opened and after it is closed", async () => {
    const store = new EmbeddedStore({ dir: join(tempDir(), "data") });
    expect(store.admit("q")).to.include({ code: "store_unavailable" });
    expect(await rejection(store.enqueue("q", message("m1")))).to.be.instanceOf(StoreRefusedError);
    await store.open();
    await store.enqueue("q", message("m1"));
    await store.close();
    expect(store.admit("q")).to.include({ code: "store_unavailable" });
    expect(await rejection(store.claim("q", 1))).to.be.instanceOf(StoreRefusedError);
  });

  it("lets a second process replay a dead letter while the app runs, without clashing with the app's writes", async () => {
    const dir = join(tempDir(), "data");
    const app = await openStore({ dir });
    await app.enqueue("q", message("dead"));
    const [dead] = await app.claim("q", 1);
    await app.deadLetter({ queue: "q", task: "t", message: dead, error: "e", attempts: 1, diedAt: 1 });

    const cli = await openStore({ dir, consumer: false }); // what the dead-letter CLI does (a consumer would fold the app's journal)
    expect((await cli.deadLetters.list()).map((l) => l.message.id)).to.deep.equal(["dead"]);
    await Promise.all([cli.deadLetters.replay("dead"), app.enqueue("q", message("live"))]);
    await closeStore(cli);

    // The app learns of another process's writes by rescanning the queue's head, at most a second later.
    await sleep(1_100);
    const got = ids(await app.claim("q", 10));
    expect(got.sort()).to.deep.equal(["dead", "live"]);
    expect(await app.deadLetters.list()).to.deep.equal([]);
  });

  it("has on disk every message whose enqueue resolved, when the process is killed mid-burst", async () => {
    const dir = join(tempDir(), "data");
    const script = `${BURST}
      const store = new EmbeddedStore({ dir: process.env.DIR });
      store.open().then(() => {
        for (let i = 0; i < 50; i++) void writer(store, (id) => say(id));
      });`;
    const out = await runChild(script, { ENGINE: ENGINE_MODULE, DIR: dir }, 1500);
    const acknowledged = out.split("\n").filter(Boolean);
    expect(acknowledged.length).to.be.greaterThan(100);

    const store = await openStore({ dir });
    const onDisk = new Set(ids(await store.claim("q", 10_000_000)));
    const lost = acknowledged.filter((id) => !onDisk.has(id));
    expect(lost).to.deep.equal([]);
    expect(await store.depth("q")).to.equal(onDisk.size);
  });

  it("after a kill mid-burst with tasks finishing and small journal segments, has every acknowledged message and none that was finished", async () => {
    const dir = join(tempDir(), "data");
    // Segments of 8 KiB: dozens start and go, and entries left behind are copied forward.
    const script = `${BURST}
      const store = new EmbeddedStore({ dir: process.env.DIR, journal: { segmentBytes: 8192 } });
      const wait = (ms) => new Promise((r) => setTimeout(r, ms));
      store.open().then(() => {
        const finisher = async () => {
          for (;;) {
            const [m] = await store.claim("q", 1);
            if (!m) { await wait(1); continue; }
            say("C " + m.id);
            // One in ten stays claimed for good: it holds its segment (it is copied forward).
            if (Number(m.id.slice(1)) % 10 === 0) continue;
            await store.complete("q", m.id);
            say("F " + m.id);
          }
        };
        for (let i = 0; i < 20; i++) void writer(store, (id) => say("A " + id));
        for (let i = 0; i < 4; i++) void finisher();
      });`;
    const out = await runChild(script, { ENGINE: ENGINE_MODULE, DIR: dir }, 1500);
    const lines = out.split("\n").filter((line) => /^[ACF] m\d+$/.test(line));
    const said = (kind: string) => new Set(lines.filter((l) => l.startsWith(kind)).map((l) => l.slice(2)));
    const acknowledged = [...said("A ")];
    const claimed = said("C ");
    const finished = said("F ");
    expect(acknowledged.length).to.be.greaterThan(100);
    expect(finished.size).to.be.greaterThan(10);

    const store = await openStore({ dir });
    const onDisk = new Set(ids(await store.claim("q", 10_000_000)));
    const missing = acknowledged.filter((id) => !finished.has(id) && !onDisk.has(id));
    // Only a message being finished at the kill may be gone without its "F" line (its marker
    // was on disk, the line not yet written): at most one per finisher, never one that was
    // not claimed, nor one of those kept claimed for good.
    expect(missing.filter((id) => !claimed.has(id) || Number(id.slice(1)) % 10 === 0), "acknowledged and lost").to.deep.equal([]);
    expect(missing.length).to.be.at.most(4);
    expect([...finished].filter((id) => onDisk.has(id)), "finished, and back").to.deep.equal([]);
  });

  it("turns a failed write into a refusal until a write succeeds again, without an unhandled rejection", async function () {
    try {
      execFileSync("prlimit", ["--version"], { stdio: "ignore" });
    } catch {
      this.skip(); // needs util-linux prlimit to cap the file size of the child
    }
    const dir = join(tempDir(), "data");
    // The child caps its own file size (RLIMIT_FSIZE) so the next commit cannot grow the file.
    const script = `
      const { EmbeddedStore } = require(process.env.ENGINE);
      const { execFileSync } = require("node:child_process");
      const { statSync } = require("node:fs");
      const { join } = require("node:path");
      let unhandled = 0;
      process.on("unhandledRejection", () => unhandled++);
      const msg = (id, raw) => ({ id, payload: { id }, raw, attempts: 0, enqueuedAt: 1 });
      const limit = (value) => execFileSync("prlimit", ["--pid", String(process.pid), "--fsize=" + value + ":unlimited"]);
      const wait = (ms) => new Promise((r) => setTimeout(r, ms));
      (async () => {
        const out = {};
        const store = new EmbeddedStore({ dir: process.env.DIR, probeIntervalMs: 50 });
        await store.open();
        await store.enqueue("q", msg("small", Buffer.from("x")));
        limit(statSync(join(process.env.DIR, "data.mdb")).size);
        try {
          await store.enqueue("q", msg("big", Buffer.alloc(300000, 1)));
          out.failed = "resolved";
        } catch (error) {
          out.failed = error.name + ":" + (error.refusal && error.refusal.code);
        }
        out.admitAfterFailure = store.admit("q") ? store.admit("q").code : null;
        out.failureLogged = store.failure !== undefined;
        await wait(200);
        limit("unlimited");
        const end = Date.now() + 5000;
        while (store.admit("q") && Date.now() < end) await wait(20);
        out.admitAfterRecovery = store.admit("q") ? store.admit("q").code : null;
        await store.enqueue("q", msg("big", Buffer.alloc(300000, 1)));
        out.ids = (await store.claim("q", 10)).map((m) => m.id);
        await store.close();
        await wait(50);
        out.unhandled = unhandled;
        process.stdout.write(JSON.stringify(out));
      })().catch((error) => { process.stderr.write(String(error && error.stack)); process.exit(1); });`;
    const result = JSON.parse(await runChild(script, { ENGINE: ENGINE_MODULE, DIR: dir })) as Record<string, unknown>;
    expect(result).to.deep.equal({
      failed: "StoreRefusedError:store_unavailable",
      admitAfterFailure: "store_unavailable",
      failureLogged: true,
      admitAfterRecovery: null,
      ids: ["small", "big"],
      unhandled: 0,
    });
  });
});
