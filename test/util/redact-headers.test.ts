import { expect } from "chai";
import { redactSecretHeaders } from "../../src/util/redact-headers";

describe("redactSecretHeaders", () => {
  it("replaces credential and signature header values, at the top and two levels down, leaving the original as it was", () => {
    const event = { body: { n: 1 }, headers: { authorization: "Bearer x", "x-hub-signature-256": "sha256=1", accept: "*/*" } };
    const emitted = { event, list: [{ headers: { cookie: "c=1" } }], other: { a: { b: { headers: { authorization: "kept: three levels down" } } } } };
    expect(redactSecretHeaders(event)).to.deep.equal({ body: { n: 1 }, headers: { authorization: "[redacted]", "x-hub-signature-256": "[redacted]", accept: "*/*" } });
    const out = redactSecretHeaders(emitted) as typeof emitted;
    expect(out.event.headers.authorization).to.equal("[redacted]");
    expect(out.list[0].headers.cookie).to.equal("[redacted]");
    expect(out.other).to.equal(emitted.other);
    expect(event.headers.authorization).to.equal("Bearer x");
    expect(emitted.list[0].headers.cookie).to.equal("c=1");
  });

  it("gives back what holds no secret as it is, without a copy", () => {
    const event = { body: { big: "x".repeat(100) }, headers: { accept: "*/*" }, list: [1, 2] };
    expect(redactSecretHeaders(event)).to.equal(event);
    expect(redactSecretHeaders("text")).to.equal("text");
    const buffer = Buffer.from("x");
    expect(redactSecretHeaders({ headers: buffer })).to.deep.equal({ headers: buffer });
  });

  it("replaces headers named like a credential beyond the logger's list, the rule the console shows them by", () => {
    const event = { headers: { "x-webhook-key": "k1", "x-functions-key": "k2", "x-my-token": "t", "idempotency-key": "i", "x-request-id": "r" } };
    expect(redactSecretHeaders(event)).to.deep.equal({ headers: { "x-webhook-key": "[redacted]", "x-functions-key": "[redacted]", "x-my-token": "[redacted]", "idempotency-key": "i", "x-request-id": "r" } });
  });

  it("replaces query parameters named like a credential, a repeated one by one placeholder, and leaves the others", () => {
    const query = { token: "t", api_key: "k", signature: "s", secret: "x", password: "p", access_token: "a", sig: ["1", "2"], page: "2", id: "42", "idempotency-key": "i" };
    const event = { headers: { accept: "*/*" }, query };
    const out = redactSecretHeaders(event) as typeof event;
    expect(out.query).to.deep.equal({ token: "[redacted]", api_key: "[redacted]", signature: "[redacted]", secret: "[redacted]", password: "[redacted]", access_token: "[redacted]", sig: "[redacted]", page: "2", id: "42", "idempotency-key": "i" });
    expect(out.headers).to.equal(event.headers);
    expect(query.token).to.equal("t");
    // An emitted `{ event }` carries its query one level down, as it does its headers.
    expect((redactSecretHeaders({ event }) as { event: typeof event }).event.query.api_key).to.equal("[redacted]");
    const plain = { query: { page: "2" } };
    expect(redactSecretHeaders(plain)).to.equal(plain);
  });
});
