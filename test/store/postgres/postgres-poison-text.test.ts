import { expect } from "chai";
import pg from "pg";
import type { WebhookEvent } from "../../../src/index";
import { webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { message } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

const NUL = "\u0000";

/**
 * Text columns refuse U+0000. Error texts holding one are stored with it escaped; ordering keys
 * holding one are stored encoded and read back as given; neither fails a batch-mate.
 */
describe("PostgreSQL: U+0000 in error texts and ordering keys", function () {
  this.timeout(60_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("stores a retry's and a dead letter's error texts with U+0000 escaped", async () => {
    const store = fixture.store();
    await store.open();
    await store.enqueue("q", message("a"));
    await store.enqueue("q", message("b"));
    const [a, b] = await store.claim("q", 2);
    await store.retryLater("q", { ...a, attempts: 1, lastError: `bad${NUL}byte` }, Date.now());
    await store.deadLetter({ queue: "q", task: "t", message: { ...b, attempts: 1, lastError: `stack${NUL}` }, error: `why${NUL}`, attempts: 1, diedAt: Date.now() });
    const [again] = await store.claim("q", 1);
    expect(again).to.include({ id: "a", attempts: 1, lastError: "bad\\u0000byte" });
    const letter = await store.deadLetters.get("b");
    expect(letter?.error).to.equal("why\\u0000");
    expect(letter?.message.lastError).to.equal("stack\\u0000");
  });

  it("keeps an ordering key holding U+0000 as given, apart from other keys, without failing its batch-mates", async () => {
    const store = fixture.store();
    await store.open();
    const keys = [`k${NUL}1`, "k", `\u0001k`, `k${NUL}1`];
    // One group-committed batch: the poison key would fail every row of it.
    const writes = keys.map((key, i) => store.enqueue("q", message(`m${i}`, { i }, { orderingKey: key })));
    writes.push(...Array.from({ length: 20 }, (_, i) => store.enqueue("q", message(`plain${i}`))));
    await Promise.all(writes);
    const claimed = await store.claim("q", 100);
    const keyed = claimed.filter((m) => m.orderingKey !== undefined);
    // m3 shares m0's key and waits behind it; the others are distinct keys.
    expect(keyed.map((m) => [m.id, m.orderingKey])).to.deep.equal([
      ["m0", `k${NUL}1`],
      ["m1", "k"],
      ["m2", `\u0001k`],
    ]);
    await store.complete("q", "m0");
    const [m3] = await store.claim("q", 10);
    expect(m3).to.include({ id: "m3", orderingKey: `k${NUL}1` });
  });

  it("reads a key beginning with U+0001 that an older version stored as it was, and orders new messages of that key behind it", async () => {
    const schema = fixture.schema();
    const store = fixture.store({ schema });
    await store.open();
    // Before the encoding, every key was stored as given, U+0001 or not.
    const old = "\u0001order-7";
    await store.enqueue("q", message("old", {}, { orderingKey: "placeholder" }));
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      await client.query(`UPDATE "${schema}".messages SET ordering_key = $1 WHERE id = 'old'`, [old]);
    } finally {
      await client.end();
    }
    await store.enqueue("q", message("new", {}, { orderingKey: old }));
    const claimed = await store.claim("q", 10);
    // "new" shares the old row's key: it waits until "old" is done.
    expect(claimed.map((m) => [m.id, m.orderingKey])).to.deep.equal([["old", old]]);
    await store.complete("q", "old");
    const [next] = await store.claim("q", 10);
    expect(next).to.include({ id: "new", orderingKey: old });
  });

  it("a handler error holding U+0000 is counted and ends as a dead letter, and other events run without pause", async () => {
    const source = webhook();
    let poisonRuns = 0;
    const done = new Set<number>();
    const app = fixture.app("nul-error");
    app.task<WebhookEvent<{ n: number }>>({ source, name: "t", concurrency: 4, retry: { attempts: 3, initialDelayMs: 1, maxDelayMs: 1 } }, async (_ctx, event) => {
      if (event.body.n === 0) {
        poisonRuns++;
        throw new Error(`poison${NUL}message`);
      }
      done.add(event.body.n);
    });
    await app.start();
    expect((await postJson(source.url, { n: 0 })).status).to.equal(202);
    for (let n = 1; n <= 200; n++) expect((await postJson(source.url, { n })).status).to.equal(202);
    const started = Date.now();
    await until(async () => (await app!.store.deadLetters.list()).length === 1 && done.size === 200, 30_000);
    const [letter] = await app.store.deadLetters.list();
    expect(letter.attempts).to.equal(3);
    expect(letter.error).to.equal("poison\\u0000message");
    expect(poisonRuns).to.equal(3);
    // Paused 1 s per failed write before; a busy machine drains these 200 well within this.
    expect(Date.now() - started).to.be.lessThan(10_000);
  });

  it("a value emitted with an ordering key holding U+0000 arrives once, with its key as given", async () => {
    const source = webhook();
    const seen: Array<{ key: string; id: string }> = [];
    const app = fixture.app("nul-emit");
    app.task<WebhookEvent<{ n: number }>, { key: string; n: number }>({ source, name: "first", emit: "out", concurrency: 4 }, async (_ctx, event) => ({ key: `a${NUL}b`, n: event.body.n }));
    app.task<{ key: string; n: number }>({ source: "out", name: "second", concurrency: 4, orderingKey: (v) => v.key }, async (ctx, value) => {
      seen.push({ key: value.key, id: ctx.eventId });
    });
    await app.start();
    for (let n = 0; n < 30; n++) expect((await postJson(source.url, { n })).status).to.equal(202);
    await until(() => seen.length >= 30, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(seen).to.have.length(30);
    expect(new Set(seen.map((s) => s.id)).size).to.equal(30);
    expect(seen.every((s) => s.key === `a${NUL}b`)).to.equal(true);
  });
});
