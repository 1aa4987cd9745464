import { expect } from "chai";
import pg from "pg";
import { CoreApp, silentLogger } from "../../../src/index";
import { DEDUPE_RESERVATION_MS } from "../../../src/sources/webhook/dedupe";
import { sleep as sleepMs, webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/**
 * Two replicas get copies of one delivery while the database is slow to take the first copy's
 * event (a table lock held longer than the dedupe reservation, within the store's statement
 * timeout): the second copy must still be recognised as a duplicate.
 */
describe("PostgreSQL dedupe: a store write slower than the reservation", function () {
  this.timeout(60_000);
  const fixture = new PostgresFixture();
  const apps: CoreApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
    await fixture.cleanup();
  });

  it("makes one event of two copies reaching two replicas while the first copy's insert waits", async () => {
    const schema = fixture.schema();
    let runs = 0;
    const replica = async () => {
      const source = webhook({ dedupe: { header: "x-delivery-id" } });
      const app = new CoreApp("dedupe-slow", { store: fixture.store({ schema, statementTimeoutMs: 40_000 }), logger: silentLogger });
      app.task({ source, name: "t" }, async () => {
        runs++;
      });
      apps.push(app);
      await app.start();
      return source.url;
    };
    const [first, second] = [await replica(), await replica()];
    const locker = new pg.Client({ connectionString: fixture.url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      // Inserts wait for this lock; reads (and the state table) do not.
      await locker.query(`LOCK TABLE "${schema}".messages IN EXCLUSIVE MODE`);
      const a = postJson(first, { n: 1 }, { "x-delivery-id": "d-1" });
      await sleepMs(500);
      const b = postJson(second, { n: 1 }, { "x-delivery-id": "d-1" });
      await sleepMs(DEDUPE_RESERVATION_MS + 2_000);
      await locker.query("COMMIT");
      const [ra, rb] = await Promise.all([a, b]);
      expect([ra.status, rb.status].sort()).to.deep.equal([200, 202]);
      await until(() => runs >= 1, 10_000);
      await sleepMs(1_000);
      const { rows } = await locker.query(`SELECT count(*)::int AS n FROM "${schema}".messages`);
      expect({ runs, left: rows[0].n }).to.deep.equal({ runs: 1, left: 0 });
    } finally {
      await locker.end();
    }
  });
});
