import { expect } from "chai";
import { CoreApp, silentLogger, type WebhookEvent } from "../../../src/index";
import { webhook } from "../../helpers/app";
import { until } from "../../helpers/wait";
import { PostgresFixture } from "./postgres-fixture";

/** A `__proto__` key of a query string or a JSON body arrives as itself on PostgreSQL, as in memory. */
describe("PostgreSQL: a __proto__ key in an event", function () {
  this.timeout(30_000);
  const fixture = new PostgresFixture();
  let app: CoreApp | undefined;
  afterEach(async () => {
    await app?.stop({ timeoutMs: 2_000 });
    app = undefined;
    await fixture.cleanup();
  });

  async function received(store: "memory" | `postgres://${string}`): Promise<WebhookEvent> {
    const source = webhook();
    let event: WebhookEvent | undefined;
    app = new CoreApp("proto", { store, logger: silentLogger });
    app.task({ source, name: "t" }, async (_ctx, e) => {
      event = e;
    });
    await app.start();
    const reply = await fetch(`${source.url}?__proto__=x&a=1`, { method: "POST", body: '{"__proto__":{"y":1},"b":2}', headers: { "content-type": "application/json" } });
    expect(reply.status).to.equal(202);
    await until(() => event !== undefined, 10_000);
    await app.stop({ timeoutMs: 2_000 });
    app = undefined;
    return event!;
  }

  const own = (value: unknown, key: string) => Object.getOwnPropertyDescriptor(value, key)?.value as unknown;

  it("arrives with the same keys and values on both engines, as own properties", async () => {
    const memory = await received("memory");
    const postgres = await received(`${fixture.url}?schema=${fixture.schema()}` as `postgres://${string}`);
    for (const event of [memory, postgres]) {
      expect(Object.keys(event.query)).to.deep.equal(["__proto__", "a"]);
      expect(own(event.query, "__proto__")).to.equal("x");
      expect(Object.getPrototypeOf(event.query)).to.equal(Object.prototype);
      expect(Object.keys(event.body as object)).to.deep.equal(["__proto__", "b"]);
    }
    expect(JSON.stringify(postgres.query)).to.equal(JSON.stringify(memory.query));
  });
});
