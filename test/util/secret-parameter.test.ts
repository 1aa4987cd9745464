import { expect } from "chai";
import { shownQuery } from "../../src/console/shown-headers";
import { redactSecretHeaders } from "../../src/util/redact-headers";
import { isSecretParameter } from "../../src/util/secret-header";

/** docs/console.md: query parameters named as the secret headers are (ending in `-key` among them) are kept redacted. */
describe("query parameters ending in -key, as the headers so named", () => {
  it("redacts ?subscription-key= and ?x-functions-key= in the history and the console, not ?idempotency-key= nor ?sort_key=", () => {
    expect(isSecretParameter("subscription-key")).to.equal(true);
    expect(isSecretParameter("X-Functions-Key")).to.equal(true);
    expect(isSecretParameter("idempotency-key")).to.equal(false);
    expect(isSecretParameter("sort_key")).to.equal(false);
    const event = { method: "POST", path: "/hook", headers: {}, query: { "subscription-key": "k1", "idempotency-key": "i", page: "2" } };
    expect((redactSecretHeaders(event) as typeof event).query).to.deep.equal({ "subscription-key": "[redacted]", "idempotency-key": "i", page: "2" });
    expect(shownQuery(event.query)).to.deep.equal({ "subscription-key": "[redacted]", "idempotency-key": "i", page: "2" });
  });
});
