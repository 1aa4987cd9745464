import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreApp, silentLogger, type CoreAppOptions, type WebhookEvent } from "../../../src/index";
import { Collector, webhook } from "../../helpers/app";
import { send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "../../store/postgres/postgres-fixture";

const SECRET_QUERY = "token=t0k&api_key=k3y&signature=s1g&secret=s3c&password=pw&access_token=acc&sig=a&sig=b&apikey=ak";

/** Credentials in the query string: the task gets them, the history (and all that reads it) does not, on every engine. */
describe("event history: query parameters named like a credential are redacted", function () {
  this.timeout(30_000);
  let dir: string;
  const postgres = new PostgresFixture();
  const apps: CoreApp[] = [];
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "query-redaction-"))));
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.stop({ timeoutMs: 2_000 });
    await postgres.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const stores = {
    memory: (): CoreAppOptions => ({ store: "memory" }),
    embedded: (): CoreAppOptions => ({ store: "embedded", dataDir: join(dir, "data") }),
    postgres: (): CoreAppOptions => ({ store: `${postgres.url}?schema=${postgres.schema()}` as `postgres://${string}` }),
  };

  for (const [engine, store] of Object.entries(stores)) {
    it(`${engine}: keeps the query with those values as [redacted], the others as sent; the task got them all`, async () => {
      const app = new CoreApp("query", { ...store(), logger: silentLogger });
      apps.push(app);
      const hook = webhook({ path: "/q" });
      const got = new Collector<WebhookEvent>();
      app.task({ source: hook, name: "receive" }, got.handler);
      await app.start();
      const reply = await send(`${hook.url}?${SECRET_QUERY}&page=2&id=42`, { body: "{}", headers: { "content-type": "application/json" } });
      expect(reply.status).to.equal(202);
      const id = reply.json<{ id: string }>().id;
      await got.waitFor(1);
      expect(got.events[0].query).to.deep.include({ token: "t0k", api_key: "k3y", access_token: "acc", sig: ["a", "b"], page: "2" });
      await until(async () => (await app.events.get(id))?.status === "succeeded");
      const kept = (await app.events.get(id))!.payload as WebhookEvent;
      expect(kept.query).to.deep.equal({
        token: "[redacted]",
        api_key: "[redacted]",
        signature: "[redacted]",
        secret: "[redacted]",
        password: "[redacted]",
        access_token: "[redacted]",
        sig: "[redacted]",
        apikey: "[redacted]",
        page: "2",
        id: "42",
      });
      const listed = await app.events.list({});
      expect(JSON.stringify(listed)).to.not.match(/t0k|k3y|s1g|s3c|acc/);
    });
  }
});
