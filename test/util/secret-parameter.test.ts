import { expect } from "chai";
import { shownQuery } from "../../src/console/shown-headers";
import { redactSecretHeaders } from "../../src/util/redact-headers";
import { isSecretHeader, isSecretParameter } from "../../src/util/secret-header";

/** docs/console.md: query parameters named as the secret headers are (ending in `-key` among them) are kept redacted. */
describe("credentials kept out of the history by the names of their query parameters and headers", () => {
  it("redacts ?subscription-key= and ?x-functions-key= in the history and the console, not ?idempotency-key= nor ?sort_key=", () => {
    expect(isSecretParameter("subscription-key")).to.equal(true);
    expect(isSecretParameter("X-Functions-Key")).to.equal(true);
    expect(isSecretParameter("idempotency-key")).to.equal(false);
    expect(isSecretParameter("sort_key")).to.equal(false);
    const event = { method: "POST", path: "/hook", headers: {}, query: { "subscription-key": "k1", "idempotency-key": "i", page: "2" } };
    expect((redactSecretHeaders(event) as typeof event).query).to.deep.equal({ "subscription-key": "[redacted]", "idempotency-key": "i", page: "2" });
    expect(shownQuery(event.query)).to.deep.equal({ "subscription-key": "[redacted]", "idempotency-key": "i", page: "2" });
  });

  it("redacts the short and JWT names of credentials too, as parameters and as headers, and leaves look-alikes alone", () => {
    for (const name of ["pwd", "pass", "otp", "jwt", "id_jwt", "private_key", "privateKey"]) expect(isSecretParameter(name), name).to.equal(true);
    for (const name of ["x-jwt-assertion", "x-goog-iap-jwt-assertion", "x-pass", "x-private-key"]) expect(isSecretHeader(name), name).to.equal(true);
    for (const name of ["passenger", "compass", "x-passthrough", "bypass", "topt"]) {
      expect(isSecretParameter(name), name).to.equal(false);
      expect(isSecretHeader(name), name).to.equal(false);
    }
    const event = { method: "POST", path: "/hook", headers: { "x-jwt-assertion": "eyJ.a.b", "x-pass": "p" }, query: { pwd: "hunter2", passenger: "3" } };
    const kept = redactSecretHeaders(event) as typeof event;
    expect(kept.headers).to.deep.equal({ "x-jwt-assertion": "[redacted]", "x-pass": "[redacted]" });
    expect(kept.query).to.deep.equal({ pwd: "[redacted]", passenger: "3" });
  });
});
