import { expect } from "chai";
import pg from "pg";
import { PostgresFixture } from "./postgres-fixture";

/**
 * The claim functions of limited and grouped tasks, called first on an empty table and then on
 * a large one: the plan of their UPDATE, as auto_explain reports it to this session, finds the
 * chosen rows by key. A plan kept from the empty table scans the whole of `messages` per claim
 * (300 ms for one claim with 25,000 messages waiting).
 */
describe("PostgreSQL: claims of limited and grouped tasks on a table that grew", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  let client: pg.Client | undefined;
  afterEach(async () => {
    await client?.end();
    client = undefined;
    await fixture.cleanup();
  });

  /** A session that is told the plan of every statement it runs, those inside functions too. */
  async function explainingSession(): Promise<{ session: pg.Client; plans: string[] }> {
    const session = new pg.Client({ connectionString: fixture.url });
    client = session;
    await session.connect();
    const plans: string[] = [];
    session.on("notice", (notice) => plans.push(notice.message ?? ""));
    for (const setting of ["LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_nested_statements = on", "SET client_min_messages = log"]) {
      await session.query(setting);
    }
    return { session, plans };
  }

  async function grow(session: pg.Client, schema: string, column: string): Promise<void> {
    await session.query(`INSERT INTO "${schema}".messages (queue, id, payload, attempts, enqueued_at) SELECT 'other', 'o' || g, '\\x00', 0, g FROM generate_series(1, 20000) g`);
    await session.query(`INSERT INTO "${schema}".messages (queue, id, payload, attempts, enqueued_at, ${column}) SELECT 'q', 'm' || g, '\\x00', 0, g, 'k' || (g % 50) FROM generate_series(1, 2000) g`);
  }

  for (const [kind, column, call] of [
    ["limited (concurrency per key)", "concurrency_key", (schema: string) => `SELECT * FROM "${schema}".claim_limited('q', 16, ${Date.now()}, 'token', 30000, 4, NULL, NULL)`],
    ["grouped (batches per key)", "group_key", (schema: string) => `SELECT * FROM "${schema}".claim_groups('q', false, 0, 0, 10, 16, ${Date.now() + 60_000}, 'token', 30000)`],
  ] as const) {
    it(`${kind}: the UPDATE of the chosen rows does not scan the whole table`, async () => {
      const schema = fixture.schema();
      const store = fixture.store({ schema });
      await store.open();
      await store.close();
      const { session, plans } = await explainingSession();
      // Five calls and more on an empty table: what PL/pgSQL needs to keep a generic plan.
      for (let i = 0; i < 7; i++) await session.query(call(schema));
      await grow(session, schema, column);
      plans.length = 0;
      const { rows } = await session.query(call(schema));
      expect(rows.length).to.be.greaterThan(0);
      const updates = plans.filter((plan) => plan.includes("Update on messages"));
      expect(updates).to.have.length.greaterThan(0);
      for (const plan of updates) expect(plan).to.not.match(/Seq Scan on messages/);
    });
  }
});
