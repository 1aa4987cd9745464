import { expect } from "chai";
import pg from "pg";
import type { QueuedMessage } from "../../../src/store/store";
import { encodeMessage } from "../../../src/store/postgres/message-rows";
import { MessageSql } from "../../../src/store/postgres/message-sql";
import { message } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

/**
 * Two replicas insert messages of one ordering key; sequence numbers are taken at insert, so
 * their commits can land out of `seq` order. The claim's "no message of this key is claimed"
 * clause is what keeps a key to one message at a time then: the earlier-seq message commits
 * after the later one was claimed, and must wait for it.
 */
describe("PostgresStore: a key's message committed out of seq order", function () {
  this.timeout(20_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("is not claimed while a later message of its key is claimed", async () => {
    const schema = fixture.schema();
    const store = fixture.store({ schema });
    await store.open();
    const other = new pg.Client({ connectionString: fixture.url });
    await other.connect();
    try {
      // The other replica's insert takes its seq first and stays uncommitted.
      await other.query("BEGIN");
      const early = message("k-early", { n: 1 }, { orderingKey: "K" });
      const insert = new MessageSql(schema).insert([encodeMessage("q", early, 0)], "wt_test_unused", "other-replica", ["q"]);
      await other.query(insert.text, insert.values);
      // This replica's message of the same key: a later seq, committed first, and claimed.
      await store.enqueue("q", message("k-late", { n: 2 }, { orderingKey: "K" }));
      expect(ids(await store.claim("q", 10))).to.deep.equal(["k-late"]);
      await other.query("COMMIT");

      expect(ids(await store.claim("q", 10)), "two messages of key K claimed at once").to.deep.equal([]);
      await store.complete("q", "k-late");
      expect(ids(await store.claim("q", 10))).to.deep.equal(["k-early"]);
    } finally {
      await other.end();
    }
  });
});
