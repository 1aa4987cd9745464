import { expect } from "chai";
import type { WebhookEvent } from "../../../src/index";
import { Collector, webhook } from "../../helpers/app";
import { send } from "../../helpers/http-client";
import { until } from "../../helpers/wait";
import { ENGINES, useEngineApps } from "../../helpers/engine-apps";

const SECRET_QUERY = "token=t0k&api_key=k3y&signature=s1g&secret=s3c&password=pw&access_token=acx&sig=a&sig=b&apikey=ak";

/** Credentials in the query string: the task gets them, the history (and all that reads it) does not, on every engine. */
describe("event history: query parameters named like a credential are redacted", function () {
  this.timeout(30_000);
  const appOn = useEngineApps("query-redaction");

  for (const engine of ENGINES) {
    it(`${engine}: keeps the query with those values as [redacted], the others as sent; the task got them all`, async () => {
      const app = appOn(engine, "query");
      const hook = webhook({ path: "/q" });
      const got = new Collector<WebhookEvent>();
      app.task({ source: hook, name: "receive" }, got.handler);
      await app.start();
      const reply = await send(`${hook.url}?${SECRET_QUERY}&page=2&id=42`, { body: "{}", headers: { "content-type": "application/json" } });
      expect(reply.status).to.equal(202);
      const id = reply.json<{ id: string }>().id;
      await got.waitFor(1);
      expect(got.events[0].query).to.deep.include({ token: "t0k", api_key: "k3y", access_token: "acx", sig: ["a", "b"], page: "2" });
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
      // Values with a letter past f: an event id is hex, and may hold "acc" by chance.
      expect(JSON.stringify(listed)).to.not.match(/t0k|k3y|s1g|s3c|acx/);
    });
  }
});
