import { expect } from "chai";
import type { EventNote } from "../../../src/store/history";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { recordingLogger, type LogLine } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

const T0 = 1_750_000_000_000;

function note(id: string, payload: unknown, extra: Partial<EventNote> = {}): EventNote {
  return { id, origin: { kind: "webhook", source: "s" }, receivedAt: T0, deliveries: [{ task: "t", queue: "webhook:t", messageId: id }], payload, ...extra };
}

describe("PostgresStore history: what the writer stores, and what it drops", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("stores what jsonb refuses as near as it can (U+0000, lone surrogates, bytes, bigint) without losing a note of the batch", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    const raw = Buffer.from([0, 255, 1]);
    h.noteEvent(note("nul", { body: { text: "a\u0000b", "k\u0000": 1, escaped: "\\u0000 stays" }, headers: {} }, { raw }));
    h.noteEvent(note("surrogates", { body: { lone: "x\ud800y", low: "\udc00", pair: "😀" }, headers: {} }));
    h.noteEvent(note("bytes", { body: Buffer.from("raw body"), headers: {} }));
    h.noteEvent(note("bigint", { body: { big: 12345678901234567890n }, headers: {} }));
    h.noteEvent(note("plain", { body: { ok: true }, headers: {} }));
    await h.flush();
    expect(h.writes.lost).to.equal(0);
    const nul = (await h.get("nul"))!;
    expect(nul.payload).to.deep.equal({ body: { text: "a\ufffdb", "k\ufffd": 1, escaped: "\\u0000 stays" }, headers: {} });
    expect(nul.raw!.equals(raw)).to.equal(true);
    expect(((await h.get("surrogates"))!.payload as { body: unknown }).body).to.deep.equal({ lone: "x\ufffdy", low: "\ufffd", pair: "😀" });
    const bytes = (await h.get("bytes"))!.payload as { body: Buffer };
    expect(Buffer.isBuffer(bytes.body) && bytes.body.toString()).to.equal("raw body");
    expect(((await h.get("bigint"))!.payload as { body: unknown }).body).to.deep.equal({ big: "12345678901234567890" });
    expect((await h.size()).events).to.equal(5);
  });

  it("loses only the note the database refuses or that cannot be encoded, says so in the log, and writes the rest of its batch", async () => {
    const lines: LogLine[] = [];
    const store = fixture.store({ logger: recordingLogger(lines) });
    await store.open();
    const h = store.history;
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    h.noteEvent(note("before", { body: 1, headers: {} }));
    // No receipt time: the NOT NULL column refuses the row, failing the batch's statement.
    h.noteEvent(note("refused", { body: 2, headers: {} }, { receivedAt: Number.NaN }));
    h.noteEvent(note("cyclic", cyclic));
    h.noteEvent(note("after", { body: 3, headers: {} }));
    await h.flush();
    expect(h.writes.lost).to.equal(2);
    expect((await h.list({})).events.map((e) => e.id).sort()).to.deep.equal(["after", "before"]);
    const dropped = lines.filter((l) => /dropped/.test(l.msg));
    expect(dropped.length).to.be.at.least(1);
    expect(dropped[0].fields).to.include({ kind: "history" });
  });

  it("gives back every body as noted, whether its raw bytes hold it as JSON or not, and searches them all", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    const cases: Array<[string, unknown, Buffer]> = [
      ["compact", { k: "v", n: [1, "é"] }, Buffer.from('{"k":"v","n":[1,"é"]}')],
      ["reordered", { k: "v", n: 1 }, Buffer.from('{"n":1,"k":"v"}')],
      ["spaced", { k: "v", n: 1 }, Buffer.from('{ "k" : "v",\n "n": 1 }')],
      ["form", { k: "v" }, Buffer.from("k=v")],
      ["nul", { k: "v", z: "a\u0000b" }, Buffer.from('{"k":"v","z":"a\\u0000b"}')],
      ["latin1", { k: "v" }, Buffer.from([0x7b, 0x22, 0x6b, 0x22, 0x3a, 0x22, 0x76, 0x22, 0x2c, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d])],
      ["changed", { k: "v", added: true }, Buffer.from('{"k":"v"}')],
    ];
    for (const [id, body, raw] of cases) h.noteEvent(note(id, { body, headers: { "x-id": id } }, { raw }));
    await h.flush();
    for (const [id, body, raw] of cases) {
      const event = (await h.get(id))!;
      const expected = id === "nul" ? { k: "v", z: "a\ufffdb" } : body;
      expect(event.payload, id).to.deep.equal({ body: expected, headers: { "x-id": id } });
      expect(event.raw!.equals(raw), id).to.equal(true);
    }
    expect((await h.list({ search: "k=v" })).events.map((e) => e.id).sort()).to.deep.equal(["changed", "compact", "form", "latin1", "nul", "reordered", "spaced"]);
    expect((await h.list({ search: "n=1" })).events.map((e) => e.id).sort()).to.deep.equal(["reordered", "spaced"]);
  });

  it("writes rows already there once, losing nothing, and the rest of their batch (a batch sent again after its reply was lost)", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    const run = (eventId: string) => ({ eventId, run: { task: "t", attempt: 1, startedAt: T0, durationMs: 1, outcome: "success" as const }, status: "succeeded" as const });
    h.noteEvent(note("first", { body: 1, headers: {} }));
    h.noteRun(run("first"));
    await h.flush();
    const before = h.writes.batches;
    h.noteEvent(note("first", { body: 1, headers: {} }));
    h.noteRun(run("first"));
    h.noteEvent(note("second", { body: 2, headers: {} }));
    h.noteRun(run("second"));
    await h.flush();
    expect(h.writes.lost).to.equal(0);
    // The plain try meets the row already there; the same batch then goes again, skipping it.
    expect(h.writes.batches - before).to.equal(2);
    expect((await h.list({})).events.map((e) => e.id).sort()).to.deep.equal(["first", "second"]);
    expect((await h.get("first"))!.runs).to.have.length(1);
    expect((await h.get("second"))!.runs).to.have.length(1);
  });

  it("drops what comes past its buffer's bound, counted and logged, and keeps the rest", async () => {
    const lines: LogLine[] = [];
    const store = fixture.store({ logger: recordingLogger(lines), historyWriter: { maxBuffered: 5 } });
    await store.open();
    const h = store.history;
    for (let i = 0; i < 12; i++) h.noteEvent(note(`b${i}`, { body: i, headers: {} }));
    await h.flush();
    expect(h.writes.lost).to.equal(7);
    expect((await h.list({})).events.map((e) => e.id).sort()).to.deep.equal(["b0", "b1", "b2", "b3", "b4"]);
    expect(lines.some((l) => /buffer is full/.test(l.msg))).to.equal(true);
  });

  it("logs every note it drops: those dropped within 5 s of a line are counted in one line once the 5 s are up", async () => {
    const lines: LogLine[] = [];
    const store = fixture.store({ logger: recordingLogger(lines), historyWriter: { maxBuffered: 5 } });
    await store.open();
    const h = store.history;
    for (let i = 0; i < 12; i++) h.noteEvent(note(`d${i}`, { body: i, headers: {} }));
    await h.flush();
    const logged = () => lines.filter((l) => l.fields?.kind === "history").reduce((sum, l) => sum + Number(l.fields?.lost ?? 0), 0);
    expect(logged()).to.equal(1);
    await new Promise((r) => setTimeout(r, 5_300));
    expect(logged()).to.equal(7);
    expect(lines.filter((l) => l.fields?.kind === "history")).to.have.length(2);
  });

  it("refuses historyWriter settings it cannot take, naming them", () => {
    const make = (historyWriter: unknown) => () => new PostgresStore({ connectionString: fixture.url, schema: "never_opened", historyWriter: historyWriter as never });
    expect(make({ delayMs: -1 })).to.throw(TypeError, /historyWriter\.delayMs/);
    expect(make({ tries: 0 })).to.throw(TypeError, /historyWriter\.tries/);
    expect(make({ maxBuffered: 1.5 })).to.throw(TypeError, /historyWriter\.maxBuffered/);
    expect(make({ batchSize: 10 })).to.throw(TypeError, /historyWriter has no option "batchSize"/);
    expect(make("fast")).to.throw(TypeError, /historyWriter must be an object/);
  });

  it("writes a burst in a few statements, not one per note", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    for (let i = 0; i < 3_000; i++) {
      h.noteEvent(note(`e${i}`, { body: { i }, headers: { "x-id": `h${i}` } }, { receivedAt: T0 + i }));
      h.noteRun({ eventId: `e${i}`, run: { task: "t", attempt: 1, startedAt: T0 + i, durationMs: 1, outcome: "success" }, status: "succeeded" });
    }
    await h.flush();
    expect(h.writes.batches).to.be.at.most(10);
    expect((await h.size()).events).to.equal(3_000);
    expect((await h.list({ search: "h1234" })).events.map((e) => e.id)).to.deep.equal(["e1234"]);
    expect((await h.list({ status: "succeeded", limit: 1 })).events.map((e) => e.id)).to.deep.equal(["e2999"]);
  });
});
