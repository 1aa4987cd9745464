import { expect } from "chai";
import type { EventNote, RunNote } from "../../../src/store/history";
import { PostgresFixture } from "./postgres-fixture";

const T0 = 1_750_000_000_000;
const HOSTILE = [
  "null", "NULL", " ", "\t", "", '"', "\\", "\\\\", 'a\\"', "{", "}", "{}", ",", "a,b", "{a,b}", "\u001e", "x\u001ey", "\u001e-\u001e", "-",
  "\u0000", "\udc00", "\ud83d\ude00", "\u2028", "\\u0000", "\\x1e", "'", "E'\\x1e'", "x".repeat(2_000), "\u007f", "ÿ",
];

describe("PostgresStore history: hostile texts in every column, every delivery and emitted count", function () {
  this.timeout(60_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

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
});
