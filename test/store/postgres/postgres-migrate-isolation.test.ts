import { expect } from "chai";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { TEST_POSTGRES_URL } from "./postgres-fixture";

/**
 * Replicas starting together on a database whose default isolation is SERIALIZABLE: the
 * migration's lock is taken before any snapshot, so all open, the first one migrating. A
 * database of the test's own: its default isolation would change other tests' statements.
 */
describe("PostgresStore: replicas opening at once under a SERIALIZABLE default isolation", function () {
  this.timeout(60_000);
  const database = `wt_serial_${process.pid}_${randomBytes(3).toString("hex")}`;
  const stores: PostgresStore[] = [];

  async function admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  before(async () => {
    await admin(`CREATE DATABASE ${database}`);
    await admin(`ALTER DATABASE ${database} SET default_transaction_isolation = 'serializable'`);
  });
  after(async () => {
    for (const store of stores.splice(0)) await store.close().catch(() => undefined);
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  it("15 stores opening the same new schema at once all open", async () => {
    const url = new URL(TEST_POSTGRES_URL);
    url.pathname = `/${database}`;
    for (let i = 0; i < 15; i++) stores.push(new PostgresStore({ connectionString: url.toString(), schema: "hooks", poolSize: 2, consumer: false }));
    const results = await Promise.allSettled(stores.map((s) => s.open()));
    const failed = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    expect(failed).to.deep.equal([]);
  });
});
