import { createHmac } from "node:crypto";
import { expect } from "chai";
import { ZoomSignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY, nowSeconds, reference } from "./helpers";

const SECRET_TOKEN = "WfQ2-6TzQvGVu8cX5ktkbA";
const BODY = JSON.stringify({ event: "meeting.started", event_ts: 1626230691572, payload: { account_id: "AAAAAABBBB", object: { id: "1234567890", topic: "Weekly" } } });

function request(body: string, signature?: string, timestamp?: string | number) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== undefined) headers["x-zm-signature"] = signature;
  if (timestamp !== undefined) headers["x-zm-request-timestamp"] = String(timestamp);
  return authRequest({ headers, body });
}

function signed(body: string, secret = SECRET_TOKEN, timestamp = nowSeconds()) {
  return request(body, reference.zoom(secret, timestamp, body), timestamp);
}

describe("ZoomSignature (x-zm-signature, x-zm-request-timestamp)", () => {
  it("accepts a request signed as Zoom documents it (v0:<timestamp>:<body>)", () => {
    expectAccepted(new ZoomSignature(SECRET_TOKEN), signed(BODY));
    expectAccepted(new ZoomSignature(SECRET_TOKEN), signed(NON_ASCII_BODY));
  });

  it("refuses a tampered body, a swapped timestamp, another secret; accepts a rotated one", () => {
    const t = nowSeconds();
    const signature = reference.zoom(SECRET_TOKEN, t, BODY);
    expectRefused(new ZoomSignature(SECRET_TOKEN), request(BODY.replace("Weekly", "Daily"), signature, t), "signature_mismatch");
    expectRefused(new ZoomSignature(SECRET_TOKEN), request(BODY, signature, t + 1), "signature_mismatch");
    expectRefused(new ZoomSignature(SECRET_TOKEN), signed(BODY, "other-token"), "signature_mismatch");
    expectAccepted(new ZoomSignature(["new-token", SECRET_TOKEN]), signed(BODY));
  });

  it("refuses expired and future timestamps", () => {
    expectRefused(new ZoomSignature(SECRET_TOKEN), signed(BODY, SECRET_TOKEN, nowSeconds() - 301), "timestamp_expired");
    expectRefused(new ZoomSignature(SECRET_TOKEN), signed(BODY, SECRET_TOKEN, nowSeconds() + 301), "timestamp_in_future");
    expectRefused(new ZoomSignature(SECRET_TOKEN), signed(BODY, SECRET_TOKEN, Date.now()), "timestamp_in_future");
  });

  it("refuses missing and garbage headers", () => {
    const t = nowSeconds();
    expectRefused(new ZoomSignature(SECRET_TOKEN), request(BODY, undefined, t), "signature_missing");
    expectRefused(new ZoomSignature(SECRET_TOKEN), request(BODY, reference.zoom(SECRET_TOKEN, t, BODY)), "timestamp_missing");
    for (const garbage of ["garbage", "v0=", "v1=" + "a".repeat(64), "a".repeat(64)]) {
      expectRefused(new ZoomSignature(SECRET_TOKEN), request(BODY, garbage, t), "signature_malformed");
    }
  });

  describe("endpoint.url_validation", () => {
    const plainToken = "qgg8vlvZRS6UYooatFL8Aw";
    const body = JSON.stringify({ payload: { plainToken }, event_ts: 1654503849680, event: "endpoint.url_validation" });

    it("answers plainToken and encryptedToken (hex HMAC-SHA256 of plainToken with the secret token)", () => {
      const auth = new ZoomSignature(SECRET_TOKEN);
      const req = signed(body);
      expectAccepted(auth, req);
      const answer = auth.handshake?.afterVerify(req, JSON.parse(body));
      expect(answer?.status_code).to.equal(200);
      expect(JSON.parse(answer!.payload.toString())).to.deep.equal({
        plainToken,
        encryptedToken: createHmac("sha256", SECRET_TOKEN).update(plainToken).digest("hex"),
      });
    });

    it("uses the first (current) secret when rotating", () => {
      const auth = new ZoomSignature(["current-token", SECRET_TOKEN]);
      const answer = auth.handshake?.afterVerify(signed(body), JSON.parse(body));
      expect(JSON.parse(answer!.payload.toString()).encryptedToken).to.equal(createHmac("sha256", "current-token").update(plainToken).digest("hex"));
    });

    it("reads a raw body, ignores other events, and can be disabled", () => {
      const auth = new ZoomSignature(SECRET_TOKEN);
      expect(auth.handshake?.afterVerify(signed(body), Buffer.from(body))?.status_code).to.equal(200);
      expect(auth.handshake?.afterVerify(signed(BODY), JSON.parse(BODY))).to.equal(undefined);
      expect(auth.handshake?.afterVerify(signed(body), { event: "endpoint.url_validation", payload: {} })).to.equal(undefined);
      expect(auth.handshake?.afterVerify(signed(body), { event: "endpoint.url_validation", payload: null })).to.equal(undefined);
      expect(new ZoomSignature(SECRET_TOKEN, { handshake: false }).handshake).to.equal(undefined);
    });

    it("an unsigned validation request is refused before any handshake", () => {
      expectRefused(new ZoomSignature(SECRET_TOKEN), request(body), "signature_missing");
    });
  });
});
