import { expect } from "chai";
import pg from "pg";
import type { WebhookEvent } from "../../../src/index";
import { webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/**
 * A failed run whose retry the database refuses every time (a real refusal, raised by a
 * trigger on the test's own schema): the attempt counts all the same, the event ends as a
 * dead letter, and the task's other events keep running meanwhile (no pause of the task).
 */
describe("PostgreSQL: a failed run whose retry cannot be written", function () {
  this.timeout(60_000);
  const fixture = new PostgresFixture();
  afterEach(() => fixture.cleanup());

  it("counts its attempts, ends as a dead letter, and does not hold the other events back", async () => {
    const schema = fixture.schema();
    const source = webhook();
    let poisonRuns = 0;
    const done = new Set<number>();
    const app = fixture.app("retry-refused", schema);
    app.task<WebhookEvent<{ n: number }>>({ source, name: "t", concurrency: 4, retry: { attempts: 30, initialDelayMs: 1, maxDelayMs: 1 } }, async (_ctx, event) => {
      if (event.body.n === 0) {
        poisonRuns++;
        throw new Error("fails on purpose");
      }
      done.add(event.body.n);
    });
    await app.start();
    const client = new pg.Client({ connectionString: fixture.url });
    await client.connect();
    try {
      // Every retry (an UPDATE setting a due time) is refused.
      await client.query(`
        CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.visible_at > 0 THEN RAISE EXCEPTION 'injected refusal'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse BEFORE UPDATE ON "${schema}".messages FOR EACH ROW EXECUTE FUNCTION "${schema}".refuse();`);
    } finally {
      await client.end();
    }
    expect((await postJson(source.url, { n: 0 })).status).to.equal(202);
    await until(() => poisonRuns >= 1, 10_000);
    for (let n = 1; n <= 100; n++) expect((await postJson(source.url, { n })).status).to.equal(202);
    const started = Date.now();
    await until(() => done.size === 100, 20_000);
    // A pause of the task per failed write would hold these back a second each time.
    expect(Date.now() - started).to.be.lessThan(8_000);
    await until(async () => (await app!.store.deadLetters.list()).length === 1, 30_000);
    expect(poisonRuns).to.be.within(29, 30);
  });
});
