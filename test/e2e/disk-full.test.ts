import { expect } from "chai";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CoreApp, WebhookSource } from "../../src/index";
import { EmbeddedStore, type EmbeddedStoreOptions } from "../../src/store/embedded/embedded-store";
import { fillDisk, freeBytes, mountLoopDisk, type LoopDisk } from "../helpers/loop-disk";
import { recordingLogger, until, type LogLine } from "../helpers/wait";

const MiB = 1024 * 1024;
const BODY = JSON.stringify({ pad: "p".repeat(16 * 1024) });

/** A full disk, on a real (loop-mounted ext4) filesystem of 40 MiB. */
describe("a full disk (loop-mounted ext4)", function () {
  this.timeout(90_000);
  let disk: LoopDisk | undefined;
  let apps: CoreApp[] = [];

  before(function () {
    const mounted = mountLoopDisk(40);
    if ("unavailable" in mounted) {
      console.log(`      skipped: ${mounted.unavailable}`);
      this.skip();
    }
    disk = mounted as LoopDisk;
  });
  after(() => disk?.unmount());
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    for (const name of readdirSync(disk!.dir)) rmSync(join(disk!.dir, name), { recursive: true, force: true });
  });

  const dataDir = () => join(disk!.dir, "data");
  const segments = () => readdirSync(join(dataDir(), "journal")).filter((name) => name.endsWith(".wal")).length;

  /** An app whose one task runs only once `open()` is called; `processed` holds the ids it ran. */
  async function startApp(options: Partial<EmbeddedStoreOptions>, lines: LogLine[] = []) {
    const logger = recordingLogger(lines);
    // A journal of at most 4 MiB, and a reserve of twice that (as the documentation says).
    const journal = { segmentBytes: 512 * 1024, maxBytes: 4 * MiB };
    const store = new EmbeddedStore({ dir: dataDir(), journal, reserveBytes: 8 * MiB, logger, ...options });
    const source = new WebhookSource({ path: "/in", host: "127.0.0.1", port: 0 });
    const app = new CoreApp("full", { store, logger });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const processed = new Set<string>();
    app.task({ source, name: "t", concurrency: 8 }, async (_ctx, event: { headers: Record<string, string> }) => {
      await gate;
      processed.add(event.headers["x-id"]!);
    });
    await app.start();
    apps.push(app);
    return { app, store, source, open, processed };
  }

  async function post(url: string, id: string): Promise<{ status: number; error?: string }> {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-id": id }, body: BODY });
    const body = (await res.json()) as { error?: string };
    return { status: res.status, error: body.error };
  }

  /** 8 senders send until `refusals` requests in a row are refused; returns the ids answered 202 and the refusal codes. */
  async function fill(url: string, prefix: string, refusals = 8): Promise<{ accepted: string[]; codes: Set<string> }> {
    const accepted: string[] = [];
    const codes = new Set<string>();
    let inARow = 0;
    let n = 0;
    const sender = async () => {
      while (n < 5_000 && inARow < refusals) {
        const id = `${prefix}${n++}`;
        const { status, error } = await post(url, id);
        if (status === 202) {
          accepted.push(id);
          inARow = 0;
        } else {
          expect(status).to.equal(503);
          codes.add(error!);
          inARow++;
        }
      }
    };
    await Promise.all(Array.from({ length: 8 }, sender));
    return { accepted, codes };
  }

  it("refuses new work with store_full before the disk is full, finishes what it accepted, and takes work again without a restart", async () => {
    const lines: LogLine[] = [];
    const { store, source, open, processed } = await startApp({}, lines);
    const { accepted, codes } = await fill(source.url, "a");
    // ~25 MiB of 16 KiB bodies, less what the event history took: it keeps the bodies too while
    // free space is above twice the reserve (how many depends on its batches' timing), then
    // yields the rest of the disk to the queues.
    expect(accepted.length).to.be.greaterThan(500);
    expect([...codes]).to.deep.equal(["store_full"]);
    await store.history.flush();
    const kept = (await store.history.size()).events;
    expect(kept, "the history kept events while there was room").to.be.greaterThan(0);
    expect(kept, "and dropped the rest").to.be.below(accepted.length);
    expect(lines.some((l) => String(l.msg).includes("the event history drops notes so that the queues keep their room"))).to.equal(true);
    open();
    await until(() => accepted.every((id) => processed.has(id)), 30_000);
    let again = 0;
    for (let i = 0; i < 100 && again !== 202; i++) {
      again = (await post(source.url, `b${i}`)).status;
      if (again !== 202) await new Promise((r) => setTimeout(r, 100));
    }
    expect(again, "accepted again once finished work freed room").to.equal(202);
  });

  it("opens again on the disk as it left it, nearly full: the journal moves into the B-tree, and every accepted message runs", async () => {
    const first = await startApp({});
    const { accepted } = await fill(first.source.url, "a");
    await first.app.stop({ timeoutMs: 500 });
    apps = [];
    expect(freeBytes(disk!.dir), "nearly full").to.be.below(10 * MiB);

    const lines: LogLine[] = [];
    const second = await startApp({}, lines);
    expect(second.store.failure?.message, "the store opened").to.equal(undefined);
    second.open();
    await until(() => accepted.every((id) => second.processed.has(id)), 30_000);
  });

  it("a stop is not held up by history writes failing on a full disk", async () => {
    // No reserve: nothing keeps the history from the last of the disk, and its writes fail.
    const lines: LogLine[] = [];
    const store = new EmbeddedStore({ dir: dataDir(), reserveBytes: 0, logger: recordingLogger(lines), historyWrites: { intervalMs: 50 } });
    await store.open();
    const raw = Buffer.from(BODY);
    const note = (id: string) => ({ id, origin: { kind: "webhook" as const, source: "in" }, receivedAt: Date.now(), deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload: { body: JSON.parse(BODY) as unknown, headers: { "content-type": "application/json" } }, raw, bodyFromRaw: true as const });
    store.history.noteEvent(note("first"));
    await store.history.flush();
    fillDisk(join(disk!.dir, "filler"));
    for (let i = 0; i < 2_000; i++) store.history.noteEvent(note(`n${i}`));
    await new Promise((r) => setTimeout(r, 300)); // a batch under way on the full disk
    for (let i = 0; i < 200; i++) store.history.noteEvent(note(`m${i}`));
    const started = Date.now();
    await store.close();
    expect(Date.now() - started, "close took (ms)").to.be.below(5_000);
  });

  it("a write that fails on a full disk leaves no new segment per retry, and the store works again once room is freed", async () => {
    // No reserve: the disk fills under the journal itself. Claimed entries keep the old segments.
    const store = new EmbeddedStore({ dir: dataDir(), reserveBytes: 0, probeIntervalMs: 100, journal: { segmentBytes: 64 * 1024 } });
    await store.open();
    try {
      const raw = Buffer.from(BODY);
      const message = (id: string) => ({ id, payload: {}, raw, attempts: 0, enqueuedAt: Date.now() });
      for (let i = 0; i < 20; i++) await store.enqueue("q", message(`a${i}`));
      expect(await store.claim("q", 100)).to.have.length(20);
      const before = segments();
      fillDisk(join(disk!.dir, "filler"));
      let refused: unknown;
      await store.enqueue("q", message("full")).catch((error: unknown) => (refused = error));
      expect(refused, "the write on the full disk was refused").to.be.instanceOf(Error);
      await new Promise((r) => setTimeout(r, 1_000)); // some 10 retries
      expect(segments() - before, "segment files added by the retries").to.be.at.most(1);
      rmSync(join(disk!.dir, "filler"));
      await until(() => store.failure === undefined, 5_000);
      await store.enqueue("q", message("after"));
    } finally {
      await store.close();
    }
  });
});
