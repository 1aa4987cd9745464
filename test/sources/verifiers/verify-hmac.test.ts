import { createHmac } from "node:crypto";
import { expect } from "chai";
import { checkHmac, hmacMatches, SignatureError, verifyHmac } from "../../../src/sources/webhook/verifiers";
import { WebhookError } from "../../../src/sources/webhook/webhook-error";
import { NON_ASCII_BODY } from "./helpers";

const SECRET = "handler-level-secret";
const RAW = Buffer.from(NON_ASCII_BODY, "utf8");
const SIGNATURE = createHmac("sha256", SECRET).update(RAW).digest("hex");

describe("verifyHmac / hmacMatches (the seed's handler-level check)", () => {
  it("matches a hex HMAC-SHA256 of the raw body (Buffer or exact string)", () => {
    expect(hmacMatches({ signature: SIGNATURE, body: RAW, secret: SECRET })).to.equal(true);
    expect(hmacMatches({ signature: SIGNATURE, body: NON_ASCII_BODY, secret: SECRET })).to.equal(true);
    expect(hmacMatches({ signature: SIGNATURE.toUpperCase(), body: RAW, secret: SECRET })).to.equal(true);
    expect(hmacMatches({ signature: SIGNATURE, body: new Uint8Array(RAW), secret: Buffer.from(SECRET) })).to.equal(true);
    expect(() => verifyHmac({ signature: SIGNATURE, body: RAW, secret: SECRET })).not.to.throw();
  });

  it("tells missing, malformed and mismatched apart", () => {
    expect(checkHmac({ signature: undefined, body: RAW, secret: SECRET })).to.equal("signature_missing");
    expect(checkHmac({ signature: "", body: RAW, secret: SECRET })).to.equal("signature_missing");
    expect(checkHmac({ signature: [SIGNATURE, SIGNATURE], body: RAW, secret: SECRET })).to.equal("signature_malformed");
    expect(checkHmac({ signature: SIGNATURE + "00", body: RAW, secret: SECRET })).to.equal("signature_malformed");
    expect(checkHmac({ signature: "é".repeat(64), body: RAW, secret: SECRET })).to.equal("signature_malformed");
    expect(checkHmac({ signature: "a".repeat(1_000_000), body: RAW, secret: SECRET })).to.equal("signature_malformed");
    expect(checkHmac({ signature: SIGNATURE, body: Buffer.concat([RAW, Buffer.from(" ")]), secret: SECRET })).to.equal("signature_mismatch");
    expect(checkHmac({ signature: SIGNATURE, body: RAW, secret: "other" })).to.equal("signature_mismatch");
    expect(checkHmac({ signature: SIGNATURE, body: RAW, secret: ["new", SECRET] })).to.equal(undefined);
  });

  it("throws a SignatureError, a 401 WebhookError, on mismatch", () => {
    try {
      verifyHmac({ signature: "0".repeat(64), body: RAW, secret: SECRET });
      expect.fail("should have thrown");
    } catch (error) {
      expect(error).to.be.instanceOf(SignatureError);
      expect(error).to.be.instanceOf(WebhookError);
      const e = error as SignatureError;
      expect(e.status).to.equal(401);
      expect(e.code).to.equal("signature_mismatch");
      expect(e.message).to.not.include(SECRET);
      expect(JSON.stringify(e.body)).to.not.include("0000");
    }
  });

  it("other algorithms, encodings and a prefix", () => {
    const b64 = "sha512=" + createHmac("sha512", SECRET).update(RAW).digest("base64");
    expect(hmacMatches({ signature: b64, body: RAW, secret: SECRET, algorithm: "sha512", encoding: "base64", prefix: "sha512=" })).to.equal(true);
    expect(hmacMatches({ signature: b64, body: RAW, secret: SECRET, algorithm: "sha512", encoding: "base64" })).to.equal(false);
  });

  it("refuses a parsed body: re-serialised JSON is not what was signed", () => {
    expect(() => hmacMatches({ signature: SIGNATURE, body: JSON.parse(NON_ASCII_BODY) as never, secret: SECRET })).to.throw(TypeError, /raw bytes/);
    expect(() => hmacMatches({ signature: SIGNATURE, body: RAW, secret: "" })).to.throw(TypeError, /secret/);
  });
});
