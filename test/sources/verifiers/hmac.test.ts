import { createHmac } from "node:crypto";
import { expect } from "chai";
import { HmacSignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY, nowSeconds } from "./helpers";

const SECRET = "generic-shared-secret";
const BODY = JSON.stringify({ id: "evt_1", kind: "order.paid" });

function hmac(algorithm: string, secret: string | Buffer, text: string | Buffer, encoding: "hex" | "base64" | "base64url" = "hex"): string {
  return createHmac(algorithm, secret).update(text).digest(encoding);
}

describe("HmacSignature (generic)", () => {
  it("defaults: hex HMAC-SHA256 of the raw body in the named header", () => {
    const auth = new HmacSignature(SECRET, { header: "X-Signature" });
    expect(auth.credentialHeaders).to.deep.equal(["x-signature"]);
    expectAccepted(auth, authRequest({ headers: { "x-signature": hmac("sha256", SECRET, BODY) }, body: BODY }));
    expectAccepted(auth, authRequest({ headers: { "x-signature": hmac("sha256", SECRET, NON_ASCII_BODY) }, body: NON_ASCII_BODY }));
    expectRefused(auth, authRequest({ headers: { "x-signature": hmac("sha256", SECRET, BODY) }, body: BODY + " " }), "signature_mismatch");
    expectRefused(auth, authRequest({ headers: { "x-signature": hmac("sha256", "other", BODY) }, body: BODY }), "signature_mismatch");
    expectRefused(auth, authRequest({ body: BODY }), "signature_missing");
    expectRefused(auth, authRequest({ headers: { "x-signature": "nope" }, body: BODY }), "signature_malformed");
    expectAccepted(new HmacSignature(["new", SECRET], { header: "x-signature" }), authRequest({ headers: { "x-signature": hmac("sha256", SECRET, BODY) }, body: BODY }));
  });

  it("algorithm, encoding and prefix", () => {
    const cases = [
      { algorithm: "sha1", encoding: "hex", prefix: "sha1=" },
      { algorithm: "sha512", encoding: "base64", prefix: "" },
      { algorithm: "sha256", encoding: "base64url", prefix: "v1=" },
    ] as const;
    for (const { algorithm, encoding, prefix } of cases) {
      const auth = new HmacSignature(SECRET, { header: "x-sig", algorithm, encoding, prefix });
      const signature = prefix + hmac(algorithm, SECRET, BODY, encoding);
      expectAccepted(auth, authRequest({ headers: { "x-sig": signature }, body: BODY }));
      if (prefix !== "") expectRefused(auth, authRequest({ headers: { "x-sig": signature.slice(prefix.length) }, body: BODY }), "signature_malformed");
      expectRefused(auth, authRequest({ headers: { "x-sig": signature }, body: BODY + "x" }), "signature_mismatch");
    }
  });

  it("a signed timestamp: template, tolerance both ways, milliseconds", () => {
    const auth = new HmacSignature(SECRET, { header: "x-sig", signedPayload: "{timestamp}.{body}", timestampHeader: "x-ts", toleranceSeconds: 60 });
    const at = (t: number) => authRequest({ headers: { "x-sig": hmac("sha256", SECRET, `${t}.${BODY}`), "x-ts": String(t) }, body: BODY });
    expectAccepted(auth, at(nowSeconds()));
    expectRefused(auth, at(nowSeconds() - 61), "timestamp_expired");
    expectRefused(auth, at(nowSeconds() + 61), "timestamp_in_future");
    expectRefused(auth, authRequest({ headers: { "x-sig": hmac("sha256", SECRET, BODY) }, body: BODY }), "timestamp_missing");

    const ms = new HmacSignature(SECRET, { header: "x-sig", signedPayload: "{timestamp}{body}", timestampHeader: "x-ts", timestampUnit: "milliseconds" });
    const t = Date.now();
    expectAccepted(ms, authRequest({ headers: { "x-sig": hmac("sha256", SECRET, `${t}${BODY}`), "x-ts": String(t) }, body: BODY }));
    expectRefused(ms, authRequest({ headers: { "x-sig": hmac("sha256", SECRET, `${t - 400_000}${BODY}`), "x-ts": String(t - 400_000) }, body: BODY }), "timestamp_expired");
  });

  it("signs method, URL, public URL and other headers when told to (e.g. Square's URL + body)", () => {
    const square = new HmacSignature(SECRET, { header: "x-square-hmacsha256-signature", encoding: "base64", signedPayload: "{publicUrl}{body}" });
    const url = "https://hooks.example.com/square";
    expectAccepted(square, authRequest({ url: "/square", publicUrl: url, headers: { "x-square-hmacsha256-signature": hmac("sha256", SECRET, url + BODY, "base64") }, body: BODY }));
    expectRefused(square, authRequest({ url: "/square", publicUrl: "http://127.0.0.1/square", headers: { "x-square-hmacsha256-signature": hmac("sha256", SECRET, url + BODY, "base64") }, body: BODY }), "signature_mismatch");

    const all = new HmacSignature(SECRET, { header: "x-sig", signedPayload: "{method} {url}\n{header:X-Delivery}\n{body}" });
    const signature = hmac("sha256", SECRET, `POST /hook?a=1\nd-42\n${BODY}`);
    expectAccepted(all, authRequest({ url: "/hook?a=1", headers: { "x-sig": signature, "x-delivery": "d-42" }, body: BODY }));
    expectRefused(all, authRequest({ url: "/hook?a=1", headers: { "x-sig": signature, "x-delivery": "d-43" }, body: BODY }), "signature_mismatch");
    expectRefused(all, authRequest({ url: "/hook?a=1", headers: { "x-sig": signature }, body: BODY }), "header_missing");
  });

  it("secretEncoding base64 and hex", () => {
    const key = Buffer.from("00ff10ee20dd", "hex");
    const signature = hmac("sha256", key, BODY);
    expectAccepted(new HmacSignature(key.toString("base64"), { header: "x-sig", secretEncoding: "base64" }), authRequest({ headers: { "x-sig": signature }, body: BODY }));
    expectAccepted(new HmacSignature(key.toString("hex"), { header: "x-sig", secretEncoding: "hex" }), authRequest({ headers: { "x-sig": signature }, body: BODY }));
  });

  it("refuses bad configuration at construction, naming the option", () => {
    const bad: [object, RegExp][] = [
      [{}, /header must be a header name/],
      [{ header: "bad header" }, /header must be a header name/],
      [{ header: "x", algorithm: "md5" }, /algorithm must be one of/],
      [{ header: "x", encoding: "binary" }, /encoding must be one of/],
      [{ header: "x", signedPayload: "{timestamp}.{body}" }, /timestampHeader is not set/],
      [{ header: "x", timestampHeader: "x-ts" }, /does not sign \{timestamp\}/],
      [{ header: "x", signedPayload: "{id}.{body}" }, /unknown placeholder \{id\}/],
      [{ header: "x", signedPayload: "{timestamp}" , timestampHeader: "t" }, /\{body\} exactly once/],
      [{ header: "x", signedPayload: "{body}{body}" }, /\{body\} exactly once/],
      [{ header: "x", toleranceSeconds: "300" }, /toleranceSeconds/],
      [{ header: "x", secretEncoding: "latin1" }, /secretEncoding/],
      [{ header: "x", headers: "y" }, /unknown option "headers"/],
    ];
    for (const [options, message] of bad) {
      expect(() => new HmacSignature(SECRET, options as never), JSON.stringify(options)).to.throw(TypeError, message);
    }
  });
});
