import { expect } from "chai";
import pg from "pg";
import type { WebhookEvent } from "../../../src/index";
import { webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/**
 * A completion the database refuses is the store's failure, never the task's: the message is
 * not inserted again (a second copy would run, and emit, twice). The refusals are real ones,
 * raised by a trigger on the test's own schema for the first `times` completions.
 */
describe("PostgreSQL: a completion that fails is not turned into a second copy of its event", function () {
  this.timeout(60_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  async function failCompletions(schema: string, sqlstate: string, times: number): Promise<void> {
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      // A sequence counts outside transactions: the rolled-back statements still count.
      await client.query(`
        CREATE SEQUENCE "${schema}".refusals;
        CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF OLD.queue <> 'out' AND nextval('"${schema}".refusals') <= ${times} THEN
            RAISE EXCEPTION 'injected refusal' USING ERRCODE = '${sqlstate}';
          END IF;
          RETURN OLD;
        END $$;
        CREATE TRIGGER refuse BEFORE DELETE ON "${schema}".messages FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse();`);
    } finally {
      await client.end();
    }
  }

  async function refusalsMade(schema: string): Promise<number> {
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT last_value FROM "${schema}".refusals`);
      return Number(rows[0].last_value);
    } finally {
      await client.end();
    }
  }

  async function run(sqlstate: string, times: number): Promise<{ firstRuns: number; emitted: string[] }> {
    const schema = fixture.schema();
    const source = webhook();
    let firstRuns = 0;
    const emitted: string[] = [];
    const app = fixture.app("completion-failure", schema);
    app.task<WebhookEvent<{ n: number }>, { n: number }>({ source, name: "first", emit: "out", retry: { attempts: 10, initialDelayMs: 1, maxDelayMs: 1 } }, async (_ctx, event) => {
      firstRuns++;
      return { n: event.body.n };
    });
    app.task<{ n: number }>({ source: "out", name: "second" }, async (ctx) => {
      emitted.push(ctx.eventId);
    });
    await app.start();
    await failCompletions(schema, sqlstate, times);
    expect((await postJson(source.url, { n: 1 })).status).to.equal(202);
    await until(() => emitted.length >= 1, 20_000);
    // Time for a second copy, if there were one, to run and emit.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await app.store.depth("webhook:first")).to.equal(0);
    expect(await refusalsMade(schema)).to.be.greaterThan(times);
    return { firstRuns, emitted };
  }

  it("a serialization failure (40001) is retried by the store: the task ran once, emitted once", async () => {
    const { firstRuns, emitted } = await run("40001", 2);
    expect(firstRuns).to.equal(1);
    expect(emitted).to.have.length(1);
  });

  it("any other refusal gives the message back as it was: it runs again and emits once", async () => {
    const { emitted } = await run("P0001", 2);
    expect(emitted).to.have.length(1);
  });
});
