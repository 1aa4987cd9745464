import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "chai";
import pg from "pg";
import { CoreApp } from "../../../src/app/core-app";
import { PostgresStore } from "../../../src/store/postgres/postgres-store";
import { Collector, webhook } from "../../helpers/app";
import { postJson } from "../../helpers/http-client";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../../helpers/throwaway-postgres";
import { recordingLogger, until, type LogLine } from "../../helpers/wait";

/**
 * The store's role refused while the app runs (NOLOGIN, a rotated password: SQLSTATE class 28)
 * is the database being unavailable: /readyz says so, webhooks are refused at once without a
 * login attempt each, the log says it now and then, and work resumes once the role may log in.
 * A cluster of the test's own: roles' login is changed.
 */
describe("PostgresStore: its role refused while the app runs", function () {
  this.timeout(90_000);
  let cluster: ThrowawayPostgres;
  let app: CoreApp | undefined;
  before(async () => {
    cluster = await startThrowawayPostgres();
  });
  after(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    await cluster?.destroy();
  });

  async function admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  it("is not ready, refuses without logging in per request, logs little, and recovers", async () => {
    await admin("CREATE ROLE hooks LOGIN; GRANT CREATE ON DATABASE postgres TO hooks");
    const lines: LogLine[] = [];
    const source = webhook();
    const collector = new Collector();
    const logger = recordingLogger(lines);
    // Tries every 250 ms at first (default 1 s): the same doubling, in a quarter of the time.
    const store = new PostgresStore({ connectionString: cluster.url.replace("postgres@", "hooks@"), schema: "refused", logger, probeIntervalMs: 250 });
    app = new CoreApp("role-refused", { store, logger });
    app.task({ source, name: "t" }, collector.handler);
    await app.start();
    expect((await postJson(source.url, { n: 0 })).status).to.equal(202);

    await admin("ALTER ROLE hooks NOLOGIN; SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'hooks'");
    const statuses: number[] = [];
    for (let n = 1; n <= 20; n++) statuses.push((await postJson(source.url, { n })).status);
    await until(() => !app!.readiness().ready, 5_000);
    // Refused at admission from now on: no request waits for a login of its own.
    for (let n = 21; n <= 40; n++) statuses.push((await postJson(source.url, { n })).status);
    expect(statuses.filter((s) => s !== 503)).to.deep.equal([]);
    expect(app.readiness().checks.store.ok).to.equal(false);
    const errors = lines.filter((l) => /cannot (reach PostgreSQL|store an event)/.test(l.msg));
    expect(errors.length).to.be.at.most(4);

    // Logins tried meanwhile, as the server logged them: the store backs off (0.25, 0.5, 1, 2 s...),
    // and webhooks (one every 50 ms here) try none. Without the doubling: 16 or more.
    const refusedLogins = () => readFileSync(join(dirname(cluster.dataDir), "server.log"), "utf8").split('role "hooks" is not permitted to log in').length - 1;
    const before = refusedLogins();
    for (let n = 41; n <= 120; n++) {
      expect((await postJson(source.url, { n })).status).to.equal(503);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(refusedLogins() - before).to.be.at.most(8);

    await admin("ALTER ROLE hooks LOGIN");
    await until(() => app!.readiness().ready, 25_000);
    expect((await postJson(source.url, { n: 99 })).status).to.equal(202);
  });
});
