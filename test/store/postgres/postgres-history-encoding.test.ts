import { expect } from "chai";
import pg from "pg";
import type { EventNote, RunNote } from "../../../src/store/history";
import { arrayLiteral } from "../../../src/store/postgres/history/note-columns";
import { PostgresFixture } from "./postgres-fixture";

const T0 = 1_750_000_000_000;

/** Texts an array literal or the payloads' separator could misread, each in every text column. */
const AWKWARD: ReadonlyArray<readonly [string, string, string]> = [
  // [what it is, as noted, as read back]
  ["quotes and backslashes", 'a"b\\c\\"d', 'a"b\\c\\"d'],
  ["braces, commas, spaces", "{x, y} NULL", "{x, y} NULL"],
  ["the word NULL", "NULL", "NULL"],
  ["control characters", "a\u001eb\u001fc\nd\te\\nf", "a\u001eb\u001fc\nd\te\\nf"],
  ["U+0000", "a\u0000b", "a\ufffdb"],
  ["a lone surrogate", "a\ud800b", "a\ufffdb"],
  ["empty", "", ""],
];

/** More such texts, each in every column, with every count of deliveries (0, 1, 2) and of emitted ids (0, 1, 3). */
const HOSTILE = [
  "null", "NULL", " ", "\t", "", '"', "\\", "\\\\", 'a\\"', "{", "}", "{}", ",", "a,b", "{a,b}", "\u001e", "x\u001ey", "\u001e-\u001e", "-",
  "\u0000", "\udc00", "\ud83d\ude00", "\u2028", "\\u0000", "\\x1e", "'", "E'\\x1e'", "x".repeat(2_000), "\u007f", "ÿ",
];

describe("PostgresStore history: notes written as columns, any text as it was", function () {
  this.timeout(60_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("writes every text column back as noted (quotes, separators, the word NULL, control characters), whatever the batch", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    AWKWARD.forEach(([, text], i) => {
      const id = `${text}#${i}`;
      const event: EventNote = {
        id,
        origin: { kind: "webhook", source: `s${text}` },
        receivedAt: T0 + i,
        // One delivery (written as texts) or two (as an array literal), one emitted id or two.
        deliveries: [{ task: `t${text}`, queue: `q${text}`, messageId: `m${text}` }, ...(i % 2 === 1 ? [{ task: `u${text}`, queue: "q2", messageId: "m2" }] : [])],
        payload: { body: { text }, headers: { "x-text": text } },
        name: `n${text}`,
        parentId: `p${text}`,
        traceId: `r${text}`,
      };
      const run: RunNote = {
        eventId: id,
        run: { task: `t${text}`, attempt: 1, startedAt: T0 + i, durationMs: 1.5, outcome: "retry", error: { type: `E${text}`, message: `m${text}`, stack: `s${text}` }, emitted: i % 2 === 0 ? [`c${text}`, "c2"] : [`c${text}`] },
        status: "failed",
      };
      h.noteEvent(event);
      h.noteRun(run);
    });
    await h.flush();
    expect(h.writes.lost).to.equal(0);
    const listed = (await h.list({ limit: 100 })).events;
    expect(listed).to.have.length(AWKWARD.length);
    for (const [what, , back] of AWKWARD) {
      const i = AWKWARD.findIndex(([w]) => w === what);
      const event = (await h.get(`${back}#${i}`))!;
      expect(event, what).to.not.equal(undefined);
      expect(event.origin, what).to.deep.equal({ kind: "webhook", source: `s${back}` });
      const second = i % 2 === 1 ? [[`u${back}`, "q2", "m2"]] : [];
      expect(event.deliveries.map((d) => [d.task, d.queue, d.messageId]), what).to.deep.equal([[`t${back}`, `q${back}`, `m${back}`], ...second]);
      expect(event.name, what).to.equal(`n${back}`);
      expect(event.parentId, what).to.equal(`p${back}`);
      expect(event.traceId, what).to.equal(`r${back}`);
      // The payload goes as JSON, where U+0000 and lone surrogates are made U+FFFD too.
      expect(event.payload, what).to.deep.equal({ body: { text: back }, headers: { "x-text": back } });
      expect(event.runs, what).to.have.length(1);
      const run = event.runs[0];
      expect(run.task, what).to.equal(`t${back}`);
      expect(run.error, what).to.deep.equal({ type: `E${back}`, message: `m${back}`, stack: `s${back}` });
      expect(run.emitted, what).to.deep.equal(i % 2 === 0 ? [`c${back}`, "c2"] : [`c${back}`]);
      expect(run.durationMs, what).to.equal(1.5);
    }
    // A header's value holding the separator and quotes is still found.
    expect((await h.list({ search: 'a"b\\c\\"d' })).events.map((e) => e.id)).to.deep.equal(['a"b\\c\\"d#0']);
  });

  it("every text in every column comes back (U+0000 and lone surrogates as U+FFFD)", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    const back = (t: string) => t.replaceAll("\u0000", "\ufffd").replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
    HOSTILE.forEach((text, i) => {
      const id = `id${i}${text.slice(0, 50)}`;
      const many = i % 3 === 0;
      const event: EventNote = {
        id,
        origin: i % 2 === 0 ? { kind: "webhook", source: `s${text}` } : { kind: "queue", queue: `q${text}` },
        receivedAt: T0 + i,
        deliveries: many ? [{ task: text, queue: text, messageId: text }, { task: `${text}2`, queue: "q", messageId: "m" }] : i % 5 === 0 ? [] : [{ task: text, queue: text, messageId: text }],
        payload: i % 7 === 0 ? undefined : { body: { text }, headers: { "x-h": text }, [text]: text },
        ...(i % 4 === 0 ? { raw: Buffer.from(text) } : {}),
        name: text,
        traceId: text,
        parentId: text,
        replayOf: text,
      };
      const run: RunNote = {
        eventId: id,
        run: { task: text, attempt: 1, startedAt: T0 + i, durationMs: i === 1 ? -0 : 0.1 * i, outcome: "retry", error: { type: text, message: text, stack: text }, emitted: i % 2 === 0 ? [text, text, ""] : i % 3 === 0 ? [] : [text] },
        status: "failed",
      };
      h.noteEvent(event);
      h.noteRun(run);
    });
    await h.flush();
    expect(h.writes.lost).to.equal(0);
    for (const [i, text] of HOSTILE.entries()) {
      const b = back(text);
      const event = (await h.get(back(`id${i}${text.slice(0, 50)}`)))!;
      const what = JSON.stringify(text.slice(0, 20));
      expect(event, what).to.not.equal(undefined);
      expect(event.name, what).to.equal(b);
      expect(event.traceId, what).to.equal(b);
      expect(event.parentId, what).to.equal(b);
      expect(event.replayOf, what).to.equal(b);
      expect(event.origin, what).to.deep.equal(i % 2 === 0 ? { kind: "webhook", source: `s${b}` } : { kind: "queue", queue: `q${b}` });
      const many = i % 3 === 0;
      const ds = event.deliveries.map((d) => [d.task, d.queue, d.messageId]);
      expect(ds, what).to.deep.equal(many ? [[b, b, b], [`${b}2`, "q", "m"]] : i % 5 === 0 ? [] : [[b, b, b]]);
      if (i % 7 !== 0) expect(event.payload, what).to.deep.equal({ body: { text: b }, headers: { "x-h": b }, [b]: b });
      else expect(event.payload, what).to.equal(null);
      if (i % 4 === 0) expect(event.raw!.equals(Buffer.from(text)), what).to.equal(true);
      const run = event.runs[0]!;
      expect(run.task, what).to.equal(b);
      expect(run.error, what).to.deep.equal({ type: b, message: b, stack: b });
      expect(run.emitted, what).to.deep.equal(i % 2 === 0 ? [b, b, ""] : i % 3 === 0 ? [] : [b]);
      expect(run.durationMs, what).to.equal(i === 1 ? 0 : 0.1 * i);
    }
  });

  it("gives a __proto__ key of a payload kept as JSON back as an own key, changing no prototype", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    // JSON.parse makes own __proto__ keys, as a webhook's body and query parse do. U+0000 in the
    // raw bytes keeps the body in the payload (jsonb), not rebuilt from the bytes.
    const rawText = '{"user":"bob\\u0000","__proto__":{"isAdmin":true}}';
    const body = JSON.parse(rawText) as object;
    const query = JSON.parse('{"__proto__":"x","a":"1"}') as object;
    h.noteEvent({ id: "proto", origin: { kind: "webhook", source: "s" }, receivedAt: T0, deliveries: [], payload: { body, query, headers: {} }, raw: Buffer.from(rawText) });
    h.noteEvent({ id: "proto-q", origin: { kind: "queue", queue: "q" }, receivedAt: T0 + 1, deliveries: [], payload: JSON.parse('{"__proto__":{"isAdmin":true},"n":1}') });
    await h.flush();
    const payload = (await h.get("proto"))!.payload as { body: Record<string, unknown>; query: Record<string, unknown> };
    // jsonb keeps keys in an order of its own: compared as sets.
    expect(Object.keys(payload.body)).to.have.members(["user", "__proto__"]);
    expect(Object.getPrototypeOf(payload.body)).to.equal(Object.prototype);
    expect(payload.body.isAdmin).to.equal(undefined);
    expect(Object.getOwnPropertyDescriptor(payload.body, "__proto__")?.value).to.deep.equal({ isAdmin: true });
    expect(Object.keys(payload.query)).to.have.members(["__proto__", "a"]);
    expect(Object.getOwnPropertyDescriptor(payload.query, "__proto__")?.value).to.equal("x");
    expect(Object.getPrototypeOf(payload.query)).to.equal(Object.prototype);
    const value = (await h.get("proto-q"))!.payload as Record<string, unknown>;
    expect(Object.keys(value)).to.have.members(["__proto__", "n"]);
    expect(Object.getPrototypeOf(value)).to.equal(Object.prototype);
    expect(value.isAdmin).to.equal(undefined);
  });

  it("gives an object whose one key is \"$bytes\" (how bytes are kept) back as that object, and bytes as bytes", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    // U+0000 in the raw bytes keeps the body in the payload (jsonb), not rebuilt from the bytes.
    const rawText = '{"a":{"$bytes":"aGVsbG8="},"b":{"$object":{"$bytes":"eA=="}},"s":"\\u0000"}';
    const body = JSON.parse(rawText) as object;
    h.noteEvent({ id: "look-alike", origin: { kind: "webhook", source: "s" }, receivedAt: T0, deliveries: [], payload: { body, headers: {} }, raw: Buffer.from(rawText) });
    const value = { $bytes: "aGk=", nested: [{ $bytes: "aGk=" }, { $object: { n: 1 } }], file: Buffer.from("hi"), keyed: { $bytes: Buffer.from("yo") } };
    h.noteEvent({ id: "look-alike-q", origin: { kind: "queue", queue: "q" }, receivedAt: T0 + 1, deliveries: [], payload: { $bytes: "aGk=" } });
    h.noteEvent({ id: "look-alike-v", origin: { kind: "queue", queue: "q" }, receivedAt: T0 + 2, deliveries: [], payload: value });
    await h.flush();
    expect(((await h.get("look-alike"))!.payload as { body: unknown }).body).to.deep.equal({ a: { $bytes: "aGVsbG8=" }, b: { $object: { $bytes: "eA==" } }, s: "\ufffd" });
    expect((await h.get("look-alike-q"))!.payload).to.deep.equal({ $bytes: "aGk=" });
    const read = (await h.get("look-alike-v"))!.payload as typeof value;
    expect(read).to.deep.equal(value);
    expect(Buffer.isBuffer(read.file) && Buffer.isBuffer(read.keyed.$bytes)).to.equal(true);
  });

  it("keeps a body whose raw bytes start with a BOM in the payload, and reads one earlier versions left to the bytes", async () => {
    const schema = fixture.schema();
    const store = fixture.store({ schema });
    await store.open();
    const h = store.history;
    const body = { repo: "octo/b" };
    const note = (id: string, at: number, b: object): EventNote => ({ id, origin: { kind: "webhook", source: "s" }, receivedAt: at, deliveries: [], payload: { body: b, headers: {} }, raw: Buffer.from(JSON.stringify(b)) });
    h.noteEvent(note("plain", T0, { repo: "octo/a" }));
    h.noteEvent(note("bom", T0 + 1, body));
    // Bytes starting with a BOM now: the body kept in the payload.
    h.noteEvent({ ...note("now", T0 + 2, body), raw: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(body))]) });
    await h.flush();
    // Such a row: the body left to the raw bytes, and the bytes starting with a BOM.
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      const { rowCount } = await client.query(`UPDATE "${schema}".history_events SET raw = '\\xefbbbf'::bytea || raw WHERE id = 'bom' AND body_from_raw`);
      expect(rowCount).to.equal(1);
      const { rows } = await client.query(`SELECT body_from_raw FROM "${schema}".history_events WHERE id = 'now'`);
      expect(rows).to.deep.equal([{ body_from_raw: false }]);
    } finally {
      await client.end();
    }
    expect(((await h.get("bom"))!.payload as { body: unknown }).body).to.deep.equal(body);
    expect((await h.list({ search: "repo=octo/a" })).events.map((e) => e.id)).to.deep.equal(["plain"]);
    expect((await h.list({ search: "repo=octo/b" })).events.map((e) => e.id)).to.deep.equal(["now", "bom"]);
  });

  it("keeps a missing payload missing, an empty raw body empty, and a batch of runs alone", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    h.noteEvent({ id: "none", origin: { kind: "queue", queue: "q" }, receivedAt: T0, deliveries: [{ task: "t", queue: "q", messageId: "none" }], payload: undefined });
    h.noteEvent({ id: "empty", origin: { kind: "webhook", source: "s" }, receivedAt: T0 + 1, deliveries: [], payload: { body: "", headers: {} }, raw: Buffer.alloc(0) });
    await h.flush();
    // One statement: none of it refused (a refused one is sent again note by note).
    expect(h.writes.batches).to.equal(1);
    // Alone in its batch: an event whose payload and raw are the only ones, and empty.
    h.noteEvent({ id: "alone", origin: { kind: "webhook", source: "s" }, receivedAt: T0 + 2, deliveries: [], payload: { body: "", headers: {} }, raw: Buffer.alloc(0) });
    await h.flush();
    h.noteRun({ eventId: "none", run: { task: "t", attempt: 1, startedAt: T0, durationMs: 0, outcome: "success" }, status: "succeeded" });
    await h.flush();
    expect(h.writes.lost).to.equal(0);
    const none = (await h.get("none"))!;
    expect(none.payload).to.equal(null);
    expect(none.runs).to.have.length(1);
    expect(none.runs[0].emitted).to.equal(undefined);
    for (const id of ["empty", "alone"]) {
      const event = (await h.get(id))!;
      expect(event.raw!.length, id).to.equal(0);
      expect(event.deliveries, id).to.deep.equal([]);
      expect((await h.list({ status: "unrouted" })).events.map((e) => e.id), id).to.include(id);
      expect(event.payload, id).to.deep.equal({ body: "", headers: {} });
    }
  });

  it("loses only a run whose numbers the database refuses (not finite, a fractional attempt), writing the rest of its batch", async () => {
    const store = fixture.store();
    await store.open();
    const h = store.history;
    const run = (eventId: string, attempt: number, startedAt: number): RunNote => ({ eventId, run: { task: "t", attempt, startedAt, durationMs: 1, outcome: "success" }, status: "succeeded" });
    h.noteEvent({ id: "e", origin: { kind: "webhook", source: "s" }, receivedAt: T0, deliveries: [{ task: "t", queue: "q", messageId: "e" }], payload: { body: 1, headers: {} } });
    h.noteRun(run("e", 1, Number.NaN));
    h.noteRun(run("e", 1, Number.POSITIVE_INFINITY));
    h.noteRun(run("e", 1.5, T0));
    h.noteRun(run("e", 2, T0 + 1));
    await h.flush();
    expect(h.writes.lost).to.equal(3);
    expect((await h.get("e"))!.runs.map((r) => r.attempt)).to.deep.equal([2]);
  });

  it("makes array literals the database reads as the values given, the fast way or the careful one", async () => {
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      const read = async (values: readonly (string | number | boolean | null)[], type: string): Promise<unknown> =>
        (await client.query({ text: `SELECT $1::${type} AS a`, values: [arrayLiteral(values)] })).rows[0].a;
      const texts = ["a", 'b"c', "d\\e", null, "", "NULL", "{x,y}", " spaced "];
      expect(await read(texts, "text[]")).to.deep.equal(texts);
      // Other escapes of JSON (control characters, U+0000, lone surrogates) take the careful way.
      expect(await read(["a\nb\u001e", "c\u0000d", "e\ud800", 'f"'], "text[]")).to.deep.equal(["a\nb\u001e", "c\ufffdd", "e\ufffd", 'f"']);
      expect(await read([1, 1.5, -2e-7, 1.75e21, null], "float8[]")).to.deep.equal([1, 1.5, -2e-7, 1.75e21, null]);
      expect(await read([Number.NaN, Number.POSITIVE_INFINITY], "float8[]")).to.deep.equal([null, null]);
      expect(await read([true, false], "boolean[]")).to.deep.equal([true, false]);
      expect(await read([], "text[]")).to.deep.equal([]);
      // An element that is itself a literal (an event's tasks) reads back as one.
      expect(await read([arrayLiteral(['t"1', "t,2"])], "text[]")).to.deep.equal(['{"t\\"1","t,2"}']);
    } finally {
      await client.end();
    }
  });
});
