import { expect } from "chai";
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddedStore, type EmbeddedStoreOptions } from "../../../src/store/embedded/embedded-store";
import { doneOp, encodeFrame, enqueueOp, newSegmentHeader, SEGMENT_HEADER_BYTES } from "../../../src/store/embedded/journal/journal-format";
import { readSegment } from "../../../src/store/embedded/journal/segment-reader";
import { decodeMessage, encodeMeta } from "../../../src/store/embedded/journal/journal-lane";
import { JournalLog } from "../../../src/store/embedded/journal/journal-log";
import type { QueuedMessage } from "../../../src/store/store";
import { StoreRefusedError } from "../../../src/store/store-errors";
import { until } from "../../helpers/wait";
import { message, rejection, storeConformance } from "../store-conformance";
import { runChild, StoreFixture } from "./store-fixture";

const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

const fixture = new StoreFixture("journal-");
const tempDir = () => fixture.tempDir();
const openStore = (options: EmbeddedStoreOptions) => fixture.openStore(options);
const closeStore = (store: EmbeddedStore) => fixture.closeStore(store);

const segmentsIn = (dir: string): string[] => readdirSync(join(dir, "journal")).filter((name) => name.endsWith(".wal")).sort();

// The B-tree path keeps its own conformance run: it takes what the journal has no room for.
storeConformance("embedded, journal off", {
  create: (limits) => new EmbeddedStore({ dir: join(tempDir(), "data"), journal: false, ...limits }),
  cleanup: () => fixture.removeDirs(),
});

describe("journal segments on disk", () => {
  function segment(frames: Buffer[][]): Buffer {
    const { bytes, header } = newSegmentHeader();
    const out = [bytes];
    frames.forEach((parts, i) => out.push(encodeFrame(header, i, parts, parts.reduce((n, p) => n + p.length, 0))));
    return Buffer.concat(out);
  }
  const enqueue = (entryId: number, raw?: Buffer) => enqueueOp(entryId, entryId * 10, "q", encodeMeta(message(`m${entryId}`)), raw);

  it("reads back every operation of every frame, raw bytes included", () => {
    const raw = Buffer.from([0, 1, 2, 255]);
    const { ops, stoppedBecause } = readSegment(segment([[...enqueue(1, raw), ...enqueue(2)], [doneOp(1)]]));
    expect(stoppedBecause).to.equal(undefined);
    expect(ops.map((op) => [op.kind, op.entryId])).to.deep.equal([["enqueue", 1], ["enqueue", 2], ["done", 1]]);
    const first = ops[0]!;
    if (first.kind !== "enqueue") throw new Error("expected an enqueue");
    expect(first).to.include({ queue: "q", seq: 10 });
    expect(decodeMessage(first.meta, first.raw)).to.deep.equal({ ...message("m1"), raw });
  });

  it("stops at a frame the crash cut short, keeping the frames before it", () => {
    const whole = segment([[...enqueue(1)], [...enqueue(2)]]);
    const torn = whole.subarray(0, whole.length - 5);
    const { ops, stoppedBecause } = readSegment(torn);
    expect(ops.map((op) => op.entryId)).to.deep.equal([1]);
    expect(stoppedBecause).to.equal("short frame");
  });

  it("stops at a frame whose bytes changed", () => {
    const whole = segment([[...enqueue(1)], [...enqueue(2)], [...enqueue(3)]]);
    whole[whole.length - 40] ^= 0xff; // inside the last frame
    const { ops, stoppedBecause } = readSegment(whole);
    expect(ops.map((op) => op.entryId)).to.deep.equal([1, 2]);
    expect(stoppedBecause).to.equal("checksum mismatch");
  });

  it("does not take a frame made for another segment (the salt differs), e.g. one smuggled inside a body", () => {
    const forged = encodeFrame(newSegmentHeader().header, 1, enqueue(9), enqueue(9).reduce((n, p) => n + p.length, 0));
    const file = Buffer.concat([segment([[...enqueue(1)]]), forged]);
    const { ops, stoppedBecause } = readSegment(file);
    expect(ops.map((op) => op.entryId)).to.deep.equal([1]);
    expect(stoppedBecause).to.equal("checksum mismatch");
  });

  it("does not take a file that is not a segment", () => {
    expect(readSegment(Buffer.from("hello, not a journal segment at all")).stoppedBecause).to.equal("not a journal segment");
    expect(readSegment(Buffer.alloc(SEGMENT_HEADER_BYTES - 1)).ops).to.deep.equal([]);
  });
});

describe("JournalLog", () => {
  afterEach(() => fixture.removeDirs());
  const log = (dir: string, segmentBytes = 1 << 20) =>
    new JournalLog({ dir, epoch: "abc123", segmentBytes, onFailure: () => undefined, onSuccess: () => undefined });

  it("starts a new segment when one is full, and deletes a segment once all its entries are done", async () => {
    const dir = tempDir();
    const journal = log(dir, 2_000);
    const landed: number[] = [];
    for (let i = 1; i <= 12; i++) {
      landed.push(await journal.append(enqueueOp(i, i, "q", encodeMeta(message(`m${i}`)), Buffer.alloc(300, i)), 1));
    }
    expect(new Set(landed).size).to.be.greaterThan(2);
    expect(readdirSync(dir).length).to.equal(new Set(landed).size);
    for (const segment of landed) journal.release(segment);
    // Every segment but the one being written goes.
    await until(() => readdirSync(dir).length === 1);
    expect(readdirSync(dir)).to.deep.equal([`abc123-${String(landed.at(-1)).padStart(8, "0")}.wal`]);
    await journal.close();
  });

  it("writes done-markers nobody waited for at the latest when it closes", async () => {
    const dir = tempDir();
    const journal = log(dir);
    await journal.append(enqueueOp(1, 1, "q", encodeMeta(message("m1")), undefined));
    journal.appendLazily([doneOp(1)]);
    await journal.close();
    const [file] = readdirSync(dir);
    expect(readSegment(readFileSync(join(dir, file!))).ops.map((op) => op.kind)).to.deep.equal(["enqueue", "done"]);
  });

  it("writes a header-only frame for an append of nothing (the store's disk probe)", async () => {
    const dir = tempDir();
    const journal = log(dir);
    expect(await journal.append([])).to.equal(0);
    await journal.close();
    const [file] = readdirSync(dir);
    const read = readSegment(readFileSync(join(dir, file!)));
    expect(read.ops).to.deep.equal([]);
    expect(read.stoppedBecause).to.equal(undefined);
    expect(read.end).to.be.greaterThan(SEGMENT_HEADER_BYTES);
  });

  it("refuses appends once closed, with a StoreRefusedError", async () => {
    const journal = log(tempDir());
    await journal.close();
    const error = await rejection(journal.append([doneOp(1)]));
    expect(error).to.be.instanceOf(StoreRefusedError);
    expect((error as StoreRefusedError).refusal.code).to.equal("store_unavailable");
  });
});

describe("EmbeddedStore journal", function () {
  this.timeout(20_000);
  afterEach(() => fixture.cleanup());

  it("writes new messages to the journal, and moves what it still holds into the B-tree at the next open, in queue order", async () => {
    const dir = join(tempDir(), "data");
    // Room for two: the next two go to the B-tree; the queue's order is one sequence over both.
    const first = await openStore({ dir, journal: { maxMessages: 2 } });
    const bytes = { raw: Buffer.from([1, 2, 3]), payload: { b: Buffer.from("inner"), n: 1 } };
    for (const id of ["a", "b", "c", "d"]) await first.enqueue("q", message(id, bytes.payload, { raw: bytes.raw }));
    expect(segmentsIn(dir)).to.have.length(1);
    expect(ids(await first.claim("q", 10))).to.deep.equal(["a", "b", "c", "d"]);
    await closeStore(first);

    const second = await openStore({ dir });
    expect(segmentsIn(dir)).to.deep.equal([]); // folded, then deleted
    expect(await second.depth("q")).to.equal(4);
    const again = await second.claim("q", 10);
    expect(ids(again)).to.deep.equal(["a", "b", "c", "d"]);
    expect(again[0]).to.deep.equal(message("a", bytes.payload, { raw: bytes.raw }));
  });

  it("does not bring back what was finished before the restart", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir });
    for (const id of ["a", "b", "c"]) await first.enqueue("q", message(id));
    await first.claim("q", 10);
    await first.complete("q", "a");
    await first.complete("q", "c");
    await closeStore(first);

    const second = await openStore({ dir });
    expect(ids(await second.claim("q", 10))).to.deep.equal(["b"]);
  });

  it("finishes a message and records its task's output in one frame, even with the journal full", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir, journal: { maxMessages: 1 } });
    await first.enqueue("in", message("x"));
    await first.claim("in", 1);
    await first.complete("in", "x", { queue: "out", message: message("x:out", { total: 3 }) });
    expect(await first.depth("in")).to.equal(0);
    const ops = readSegment(readFileSync(join(dir, "journal", segmentsIn(dir)[0]!))).ops;
    const done = ops.find((op) => op.kind === "done")!;
    const output = ops.filter((op) => op.kind === "enqueue")[1]!;
    expect(done.frame).to.be.a("number").and.equal(output.frame);
    await closeStore(first);

    const second = await openStore({ dir });
    expect(await second.claim("in", 10)).to.deep.equal([]);
    expect(await second.claim("out", 10)).to.deep.equal([message("x:out", { total: 3 })]);
  });

  it("does not duplicate messages when the process died between moving the journal and deleting it", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir });
    for (const id of ["a", "b"]) await first.enqueue("q", message(id));
    await closeStore(first);
    const saved = join(tempDir(), "saved");
    mkdirSync(saved);
    for (const name of segmentsIn(dir)) copyFileSync(join(dir, "journal", name), join(saved, name));

    await closeStore(await openStore({ dir })); // moves a and b into the B-tree
    for (const name of readdirSync(saved)) copyFileSync(join(saved, name), join(dir, "journal", name)); // as if never deleted

    const third = await openStore({ dir });
    expect(await third.depth("q")).to.equal(2);
    expect(ids(await third.claim("q", 10))).to.deep.equal(["a", "b"]);
  });

  it("keeps the frames before a torn one, and takes new messages after it", async () => {
    const dir = join(tempDir(), "data");
    const first = await openStore({ dir });
    await first.enqueue("q", message("kept"));
    await closeStore(first);
    const [name] = segmentsIn(dir);
    appendFileSync(join(dir, "journal", name!), Buffer.from([0x40, 0, 0, 0, 1, 0, 0, 0, 9, 9])); // half a frame

    const second = await openStore({ dir });
    await second.enqueue("q", message("new"));
    expect(ids(await second.claim("q", 10))).to.deep.equal(["kept", "new"]);
  });

  it("sends a message larger than the journal's byte budget to the B-tree", async () => {
    const dir = join(tempDir(), "data");
    const store = await openStore({ dir, journal: { maxBytes: 1024 } });
    await store.enqueue("q", message("small", {}, { raw: Buffer.alloc(100) }));
    await store.enqueue("q", message("large", {}, { raw: Buffer.alloc(4096) }));
    const frames = readSegment(readFileSync(join(dir, "journal", segmentsIn(dir)[0]!))).ops;
    expect(frames.map((op) => op.kind === "enqueue" && decodeMessage(op.meta, op.raw).id)).to.deep.equal(["small"]);
    expect(ids(await store.claim("q", 10))).to.deep.equal(["small", "large"]);
  });

  it("gives a claimed message back on release, in its place, and a retry leaves the journal for the B-tree", async () => {
    const dir = join(tempDir(), "data");
    const store = await openStore({ dir });
    for (const id of ["a", "b", "c"]) await store.enqueue("q", message(id));
    const claimed = await store.claim("q", 2);
    await store.release("q", ids(claimed).reverse());
    expect(ids(await store.claim("q", 3))).to.deep.equal(["a", "b", "c"]);
    await store.retryLater("q", message("a", { n: "a" }, { attempts: 1, lastError: "boom" }), Date.now() + 60_000);
    await store.complete("q", "b");
    await store.complete("q", "c");
    await closeStore(store);

    const reopened = await openStore({ dir });
    expect(await reopened.depth("q")).to.equal(1);
    expect(await reopened.claim("q", 10)).to.deep.equal([]); // a waits for its retry time
  });

  it("leaves the journal alone in a process that does not consume (the CLI)", async () => {
    const dir = join(tempDir(), "data");
    const app = await openStore({ dir });
    await app.enqueue("q", message("a"));
    const before = segmentsIn(dir).map((name) => readFileSync(join(dir, "journal", name)));
    // In its own process, as the CLI runs: two lmdb environments on one directory in one
    // process can deadlock (the second open waits for the first's write lock, whose writer
    // waits for the event loop).
    const script = `
      const { EmbeddedStore } = require(process.env.ENGINE);
      const cli = new EmbeddedStore({ dir: process.env.DIR, consumer: false });
      cli.open().then(() => cli.deadLetters.list()).then((letters) => cli.close().then(() => process.stdout.write(String(letters.length))));`;
    const engine = join(__dirname, "..", "..", "..", "src", "store", "embedded", "embedded-store.js");
    expect(await runChild(script, { ENGINE: engine, DIR: dir })).to.equal("0");
    expect(segmentsIn(dir).map((name) => readFileSync(join(dir, "journal", name)))).to.deep.equal(before);
    expect(ids(await app.claim("q", 10))).to.deep.equal(["a"]);
  });

  it("counts the journal's messages in a process that does not consume (the CLI's status), the consumer running or stopped, and leaves the journal alone", async () => {
    const dir = join(tempDir(), "data");
    const app = await openStore({ dir });
    for (const id of ["a", "b", "c"]) await app.enqueue("q", message(id, { n: id }, { enqueuedAt: 1_700_000_000_000 + id.charCodeAt(0) }));
    await app.claim("q", 1);
    await app.complete("q", "a");
    const script = `
      const { EmbeddedStore } = require(process.env.ENGINE);
      const cli = new EmbeddedStore({ dir: process.env.DIR, consumer: false });
      cli.open().then(async () => {
        const seen = { names: await cli.queueNames(), q: await cli.stats("q") };
        await cli.close();
        process.stdout.write(JSON.stringify(seen));
      });`;
    const engine = join(__dirname, "..", "..", "..", "src", "store", "embedded", "embedded-store.js");
    const peek = async () => JSON.parse(await runChild(script, { ENGINE: engine, DIR: dir })) as { names: string[]; q: { waiting: number; oldestEnqueuedAt: number } };
    const expected = { names: ["q"], q: { waiting: 2, inFlight: 0, oldestEnqueuedAt: 1_700_000_000_000 + "b".charCodeAt(0), deadLetters: 0, delayed: 0 } };
    const before = segmentsIn(dir).map((name) => readFileSync(join(dir, "journal", name)));
    expect(await peek(), "consumer running").to.deep.equal(expected);
    await closeStore(app);
    const stopped = segmentsIn(dir).map((name) => readFileSync(join(dir, "journal", name)));
    expect(stopped).to.have.length.above(0);
    expect(await peek(), "consumer stopped, its journal not folded yet").to.deep.equal(expected);
    expect(segmentsIn(dir).map((name) => readFileSync(join(dir, "journal", name)))).to.deep.equal(stopped);
    expect(before).to.have.length(stopped.length);

    // A fold cut short (segments still there, their messages in the B-tree too): counted once.
    const saved = segmentsIn(dir).map((name) => [name, readFileSync(join(dir, "journal", name))] as const);
    await closeStore(await openStore({ dir }));
    for (const [name, bytes] of saved) writeFileSync(join(dir, "journal", name), bytes);
    expect(await peek(), "after a fold cut short").to.deep.equal(expected);
  });

  it("ignores files in the journal directory that are not segments", async () => {
    const dir = join(tempDir(), "data");
    mkdirSync(join(dir, "journal"), { recursive: true });
    writeFileSync(join(dir, "journal", "notes.txt"), "not a segment");
    const store = await openStore({ dir });
    await store.enqueue("q", message("a"));
    expect(ids(await store.claim("q", 10))).to.deep.equal(["a"]);
    expect(readdirSync(join(dir, "journal"))).to.include("notes.txt");
  });
  it("keeps an acknowledged message whose segment closed while the next frame waited to start a new one", async () => {
    const dir = join(tempDir(), "data");
    // Tiny segments: every frame begins a new one.
    const first = await openStore({ dir, journal: { segmentBytes: 64 } });
    const a = first.enqueue("q", message("a"));
    await new Promise((resolve) => setImmediate(resolve)); // a's frame is on its way
    const b = first.enqueue("q", message("b"));
    await Promise.all([a, b]);
    await closeStore(first);
    const second = await openStore({ dir });
    expect(ids(await second.claim("q", 10))).to.deep.equal(["a", "b"]);
  });

  it("after a crash, brings back neither a finished message whose done-marker sits in a later segment, nor loses one left behind in an old segment", async () => {
    const dir = join(tempDir(), "data");
    const store = await openStore({ dir, journal: { segmentBytes: 64 } });
    await Promise.all([store.enqueue("q", message("old")), store.enqueue("q", message("done"))]); // one frame, one segment
    await store.claim("q", 2);
    await store.complete("q", "done"); // its marker goes to the next segment
    for (const id of ["c", "d", "e"]) await store.enqueue("q", message(id)); // more segments: "old" is copied forward
    await until(() => segmentsIn(dir).length <= 3);
    // What a kill now would leave: the journal's files as they are (every write is synced).
    const crashed = join(tempDir(), "crashed");
    mkdirSync(join(crashed, "journal"), { recursive: true });
    for (const name of segmentsIn(dir)) copyFileSync(join(dir, "journal", name), join(crashed, "journal", name));
    const reopened = await openStore({ dir: crashed });
    expect(ids(await reopened.claim("q", 10))).to.deep.equal(["old", "c", "d", "e"]);
  });

  it("does not hand out its own message under another process's key that has the same sequence number", async () => {
    // The app's hand-off of fresh B-tree messages is by sequence number; a CLI replaying a
    // dead letter picks sequence numbers of its own. Tags decide which key sorts first, so a
    // few rounds.
    for (let round = 0; round < 6; round++) {
      const dir = join(tempDir(), `data${round}`);
      const app = await openStore({ dir, journal: false });
      await app.enqueue("q", message("dead"));
      await app.claim("q", 1);
      await app.deadLetter({ queue: "q", task: "t", message: message("dead"), error: "e", attempts: 1, diedAt: 1 });
      await app.enqueue("q", message("a"));
      const cli = await openStore({ dir, consumer: false });
      await app.enqueue("q", message("b")); // the sequence number the CLI will pick as well
      expect(await cli.deadLetters.replay("dead")).to.equal(true);
      await closeStore(cli);
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // the app rescans for other processes' work
      const claimed = await app.claim("q", 10);
      expect(ids(claimed).sort(), `round ${round}`).to.deep.equal(["a", "b", "dead"]);
      for (const m of claimed) await app.complete("q", m.id);
      expect(await app.claim("q", 10), `round ${round}`).to.deep.equal([]);
      await closeStore(app);
    }
  });
});
