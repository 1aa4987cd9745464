import { expect } from "chai";
import { MetaSignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY, reference } from "./helpers";

const APP_SECRET = "0123456789abcdef0123456789abcdef";
// Meta sends non-ASCII as \u escapes and signs those bytes; either way the raw bytes are what count.
const BODY = '{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"field":"messages","value":{"text":"caf\\u00e9"}}]}]}';

function post(body: string, signature?: string) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== undefined) headers["x-hub-signature-256"] = signature;
  return authRequest({ headers, body });
}

function challenge(query: string) {
  return authRequest({ method: "GET", url: `/meta?${query}` });
}

describe("MetaSignature (X-Hub-Signature-256, hub.challenge)", () => {
  it("accepts a body signed with the app secret (escaped and raw UTF-8 alike)", () => {
    expectAccepted(new MetaSignature(APP_SECRET), post(BODY, reference.meta(APP_SECRET, BODY)));
    expectAccepted(new MetaSignature(APP_SECRET), post(NON_ASCII_BODY, reference.meta(APP_SECRET, NON_ASCII_BODY)));
  });

  it("refuses the unescaped re-serialisation of an escaped body", () => {
    const reserialised = JSON.stringify(JSON.parse(BODY));
    expect(reserialised).to.not.equal(BODY);
    expectRefused(new MetaSignature(APP_SECRET), post(reserialised, reference.meta(APP_SECRET, BODY)), "signature_mismatch");
  });

  it("refuses a tampered body and another secret; accepts a rotated secret", () => {
    expectRefused(new MetaSignature(APP_SECRET), post(BODY.replace('"1"', '"2"'), reference.meta(APP_SECRET, BODY)), "signature_mismatch");
    expectRefused(new MetaSignature(APP_SECRET), post(BODY, reference.meta("other", BODY)), "signature_mismatch");
    expectAccepted(new MetaSignature(["new-app-secret", APP_SECRET]), post(BODY, reference.meta(APP_SECRET, BODY)));
  });

  it("refuses missing and garbage signatures, and SHA-1 only", () => {
    expectRefused(new MetaSignature(APP_SECRET), post(BODY), "signature_missing");
    for (const garbage of ["garbage", "sha1=" + "a".repeat(40), "sha256=" + "g".repeat(64), reference.meta(APP_SECRET, BODY).toUpperCase()]) {
      expectRefused(new MetaSignature(APP_SECRET), post(BODY, garbage), "signature_malformed");
    }
  });

  describe("subscription check (GET hub.challenge)", () => {
    const auth = new MetaSignature(APP_SECRET, { verifyToken: "my-verify-token" });

    it("answers the challenge as text for the right token, and lists GET as a handshake method", () => {
      const answer = auth.handshake?.beforeVerify(challenge("hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=my-verify-token"));
      expect(answer?.status_code).to.equal(200);
      expect(answer?.payload.toString()).to.equal("1158201444");
      expect(answer?.headers["content-type"]).to.match(/^text\/plain/);
      expect(auth.handshake?.methods).to.deep.equal(["GET"]);
    });

    it("answers 403 verify_token_mismatch for a wrong, missing or repeated token, or another mode", () => {
      for (const query of [
        "hub.mode=subscribe&hub.challenge=1&hub.verify_token=wrong",
        "hub.mode=subscribe&hub.challenge=1",
        "hub.mode=subscribe&hub.challenge=1&hub.verify_token=my-verify-token&hub.verify_token=x",
        "hub.mode=unsubscribe&hub.challenge=1&hub.verify_token=my-verify-token",
        "hub.mode=subscribe&hub.challenge=1&hub.verify_token=my-verify-token%C3%A9",
      ]) {
        const answer = auth.handshake?.beforeVerify(challenge(query));
        expect(answer?.status_code, query).to.equal(403);
        expect(JSON.parse(answer!.payload.toString()).error).to.equal("verify_token_mismatch");
      }
    });

    it("answers 400 for a missing or odd challenge", () => {
      expect(auth.handshake?.beforeVerify(challenge("hub.mode=subscribe&hub.verify_token=my-verify-token"))?.status_code).to.equal(400);
      expect(auth.handshake?.beforeVerify(challenge("hub.mode=subscribe&hub.verify_token=my-verify-token&hub.challenge=%3Cscript%3E%20x"))?.status_code).to.equal(400);
    });

    it("lets other requests through to signature verification", () => {
      expect(auth.handshake?.beforeVerify(authRequest({ method: "POST", url: "/meta?hub.mode=subscribe" }))).to.equal(undefined);
      expect(auth.handshake?.beforeVerify(challenge("foo=bar"))).to.equal(undefined);
      expect(auth.handshake?.beforeVerify(authRequest({ method: "GET", url: "/meta" }))).to.equal(undefined);
      expectRefused(auth, authRequest({ method: "GET", url: "/meta" }), "signature_missing");
    });

    it("accepts any of several verify tokens; none configured means no handshake", () => {
      const rotating = new MetaSignature(APP_SECRET, { verifyToken: ["new-token", "old-token"] });
      expect(rotating.handshake?.beforeVerify(challenge("hub.mode=subscribe&hub.challenge=7&hub.verify_token=old-token"))?.status_code).to.equal(200);
      expect(new MetaSignature(APP_SECRET).handshake).to.equal(undefined);
      expect(() => new MetaSignature(APP_SECRET, { verifyToken: "" })).to.throw(TypeError, /verifyToken/);
    });
  });
});
