import { expect } from "chai";
import pg from "pg";
import type { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { StoreRefusedError } from "../../../src/store/store-errors";
import { message, rejection } from "../store-conformance";
import { PostgresFixture } from "./postgres-fixture";

/**
 * A statement that runs past statement_timeout fails that statement's work only: the store
 * stays available (no 503 for everyone until the probe comes by).
 */
describe("PostgresStore: one statement timing out", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  /** A store with a short statement timeout, and what `attempt` gets while `table` is locked by another session. */
  async function whileLocked(table: string, attempt: (store: PostgresStore) => Promise<unknown>): Promise<{ store: PostgresStore; error: unknown }> {
    const schema = fixture.schema();
    const store = fixture.store({ schema, statementTimeoutMs: 300, probeIntervalMs: 5_000, depthRefreshMs: 60_000 });
    await store.open();
    const locker = new pg.Client({ connectionString: fixture.url });
    await locker.connect();
    try {
      // Holds the table: the statement waits, and its statement_timeout ends it.
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE "${schema}".${table} IN ACCESS EXCLUSIVE MODE`);
      const error = await rejection(attempt(store));
      await locker.query("ROLLBACK");
      return { store, error };
    } finally {
      await locker.end();
    }
  }

  it("fails the write that timed out, and the store goes on taking work", async () => {
    const { store, error } = await whileLocked("messages", (s) => s.enqueue("q", message("slow")));
    expect(error).to.be.instanceOf(StoreRefusedError);
    expect(store.failure).to.equal(undefined);
    expect(store.admit("q")).to.equal(undefined);
    await store.enqueue("q", message("next"));
    expect((await store.claim("q", 10)).map((m) => m.id)).to.deep.equal(["next"]);
  });

  it("a history read the timeout cancels is a refusal (the console's 503), and the store stays available", async () => {
    const { store, error } = await whileLocked("history_events", (s) => s.history.list({}));
    expect(error).to.be.instanceOf(StoreRefusedError);
    expect((error as StoreRefusedError).refusal.message).to.contain("statement timeout");
    expect(store.failure).to.equal(undefined);
    expect((await store.history.list({})).events).to.deep.equal([]);
  });
});
