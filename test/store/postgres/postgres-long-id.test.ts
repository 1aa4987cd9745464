import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { message } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

/**
 * Claimed ids and dead letters are indexed by id, and a B-tree entry holds at most 2,704 bytes:
 * a message with a longer id (one that does not compress) was taken by enqueue, then failed
 * every claim of its queue, its batch-mates' included, for ever.
 */
describe("PostgreSQL: a message id too long to index", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("is refused at enqueue, alone, and the queue's other messages are claimed", async () => {
    const store = fixture.store();
    await store.open();
    const id = randomBytes(3_000).toString("base64");
    const results = await Promise.allSettled([store.enqueue("q", message(id)), store.enqueue("q", message("mate"))]);
    expect(results[0].status).to.equal("rejected");
    const reason = (results[0] as PromiseRejectedResult).reason as Error & { cause?: Error };
    expect(String(reason.cause?.message ?? reason.message)).to.match(/message id is \d+ bytes long/);
    expect(results[1].status).to.equal("fulfilled");
    const claimed = await store.claim("q", 10);
    expect(claimed.map((m) => m.id)).to.deep.equal(["mate"]);
  });

  it("takes an id of 2,000 bytes that does not compress, through claim and dead letter", async () => {
    const store = fixture.store();
    await store.open();
    const id = randomBytes(1_500).toString("base64");
    await store.enqueue("q", message(id));
    const [claimed] = await store.claim("q", 1);
    expect(claimed.id).to.equal(id);
    await store.deadLetter({ queue: "q", task: "t", message: { ...claimed, attempts: 1 }, error: "no", attempts: 1, diedAt: Date.now() });
    expect((await store.deadLetters.get(id))?.message.id).to.equal(id);
  });

  it("refuses an ordering key too long to index alone, without failing its batch-mates", async () => {
    const store = fixture.store();
    await store.open();
    const key = randomBytes(3_000).toString("base64");
    const results = await Promise.allSettled([store.enqueue("q", message("long-key", {}, { orderingKey: key })), store.enqueue("q", message("mate"))]);
    expect(results.map((r) => r.status)).to.deep.equal(["rejected", "fulfilled"]);
    const reason = (results[0] as PromiseRejectedResult).reason as Error & { cause?: Error };
    expect(String(reason.cause?.message ?? reason.message)).to.match(/ordering key is \d+ bytes long/);
    expect((await store.claim("q", 10)).map((m) => m.id)).to.deep.equal(["mate"]);
  });
});
