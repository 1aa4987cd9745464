import { expect } from "chai";
import pg from "pg";
import { CoreApp } from "../../../src/index";
import { webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { recordingLogger, type LogLine } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/** A failed batch fails all its requests at once: the log says so in one line, not one per request. */
describe("PostgreSQL: a batch of webhooks the store fails to write", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  let app: CoreApp | undefined;
  afterEach(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
    await fixture.cleanup();
  });

  it("answers each 503 and logs one line for them all", async () => {
    const schema = fixture.schema();
    const lines: LogLine[] = [];
    const store = fixture.store({ schema, statementTimeoutMs: 300, depthRefreshMs: 60_000 });
    const source = webhook();
    app = new CoreApp("refusal-log", { store, logger: recordingLogger(lines) });
    app.task({ source, name: "t" }, async () => undefined);
    await app.start();
    const locker = new pg.Client({ connectionString: fixture.url });
    await locker.connect();
    try {
      // The batch's INSERT waits for the lock and times out: every request of it fails.
      await locker.query("BEGIN");
      await locker.query(`LOCK TABLE "${schema}".messages IN ACCESS EXCLUSIVE MODE`);
      const replies = await Promise.all(Array.from({ length: 40 }, (_, n) => postJson(source.url, { n })));
      expect(replies.map((r) => r.status).filter((s) => s !== 503)).to.deep.equal([]);
      await locker.query("ROLLBACK");
    } finally {
      await locker.end();
    }
    const logged = lines.filter((l) => l.msg === "cannot store an event: answered 503");
    expect(logged).to.have.length(1);
    expect((await postJson(source.url, { n: 99 })).status).to.equal(202);
  });
});
