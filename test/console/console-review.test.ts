import { expect } from "chai";
import { ConsoleClient } from "./console-client";
import { CONSOLE_TOKEN, eventually, startShop, type ShopApp } from "./shop-app";

/** Refusals and lockouts found by review: each was a 500, a lockout or a dead button. */
describe("console: refusals and lockouts", function () {
  this.timeout(20_000);
  let shop: ShopApp | undefined;
  afterEach(async () => {
    await shop?.stop();
    shop = undefined;
  });

  it("answers 400, not 500, to a time too large to be one, on the bulk replay's page and form", async () => {
    shop = await startShop();
    const client = new ConsoleClient(shop.consoleUrl);
    await client.signIn();
    const huge = "9".repeat(400);
    for (const query of [`since=${huge}`, `until=${huge}d`, `status=dead&since=${huge}h`]) {
      const page = await client.request(`/replay-matching?${query}`);
      expect(page.status, query).to.equal(400);
      expect(page.text, query).to.include("is not a time");
      const list = await client.request(`/events?${query}`);
      expect(list.status, query).to.equal(400);
    }
    const posted = await client.post("/replay-matching", { status: "dead", since: `${huge}d`, ratePerSecond: "5" });
    expect(posted.status).to.equal(400);
    expect(posted.text).to.include("is not a time");
  });

});
