import { expect } from "chai";
import { SlackSignature } from "../../../src/sources/webhook/verifiers";
import { WebhookResponse } from "../../../src/sources/webhook/webhook-response";
import { atTime, authRequest, expectAccepted, expectRefused, NON_ASCII_BODY, nowSeconds, reference } from "./helpers";

const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
// Slack's published example (api.slack.com, "Verifying requests from Slack").
const DOC_TIMESTAMP = 1531420618;
const DOC_BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const DOC_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
const EVENT = JSON.stringify({ token: "x", team_id: "T1", type: "event_callback", event_id: "Ev1", event: { type: "app_mention", text: "hi" } });

function request(body: string | Buffer, signature?: string, timestamp?: string | number, contentType = "application/json") {
  const headers: Record<string, string> = { "content-type": contentType };
  if (signature !== undefined) headers["x-slack-signature"] = signature;
  if (timestamp !== undefined) headers["x-slack-request-timestamp"] = String(timestamp);
  return authRequest({ headers, body });
}

function signed(body: string, secret = SECRET, timestamp = nowSeconds()) {
  return request(body, reference.slack(secret, timestamp, body), timestamp);
}

describe("SlackSignature (X-Slack-Signature, X-Slack-Request-Timestamp)", () => {
  it("accepts Slack's published example at its own time, and refuses it five minutes later", () => {
    const auth = new SlackSignature(SECRET);
    const doc = request(DOC_BODY, DOC_SIGNATURE, DOC_TIMESTAMP, "application/x-www-form-urlencoded");
    atTime(DOC_TIMESTAMP + 1, () => expectAccepted(auth, doc));
    atTime(DOC_TIMESTAMP + 301, () => expectRefused(auth, doc, "timestamp_expired"));
    expectRefused(auth, doc, "timestamp_expired");
  });

  it("accepts an Events API request and a slash command (form body)", () => {
    expectAccepted(new SlackSignature(SECRET), signed(EVENT));
    expectAccepted(new SlackSignature(SECRET), signed("command=%2Fweather&text=paris+today&user_id=U1"));
  });

  it("verifies the raw bytes of a non-ASCII body", () => {
    expectAccepted(new SlackSignature(SECRET), signed(NON_ASCII_BODY));
    const t = nowSeconds();
    expectRefused(new SlackSignature(SECRET), request(NON_ASCII_BODY.normalize("NFC"), reference.slack(SECRET, t, NON_ASCII_BODY), t), "signature_mismatch");
  });

  it("refuses a tampered body and a swapped timestamp", () => {
    const t = nowSeconds();
    const signature = reference.slack(SECRET, t, EVENT);
    expectRefused(new SlackSignature(SECRET), request(EVENT.replace("hi", "ho"), signature, t), "signature_mismatch");
    expectRefused(new SlackSignature(SECRET), request(EVENT, signature, t - 1), "signature_mismatch");
  });

  it("refuses another secret; accepts a rotated one", () => {
    expectRefused(new SlackSignature(SECRET), signed(EVENT, "another-secret"), "signature_mismatch");
    expectAccepted(new SlackSignature(["new-secret", SECRET]), signed(EVENT));
  });

  it("refuses expired and future timestamps; honours toleranceSeconds", () => {
    expectRefused(new SlackSignature(SECRET), signed(EVENT, SECRET, nowSeconds() - 301), "timestamp_expired");
    expectRefused(new SlackSignature(SECRET), signed(EVENT, SECRET, nowSeconds() + 301), "timestamp_in_future");
    expectRefused(new SlackSignature(SECRET, { toleranceSeconds: 10 }), signed(EVENT, SECRET, nowSeconds() - 60), "timestamp_expired");
    expectAccepted(new SlackSignature(SECRET, { toleranceSeconds: 120 }), signed(EVENT, SECRET, nowSeconds() - 60));
  });

  it("refuses missing headers", () => {
    const t = nowSeconds();
    expectRefused(new SlackSignature(SECRET), request(EVENT, undefined, t), "signature_missing");
    expectRefused(new SlackSignature(SECRET), request(EVENT, reference.slack(SECRET, t, EVENT)), "timestamp_missing");
  });

  it("refuses garbage headers", () => {
    const t = nowSeconds();
    const good = reference.slack(SECRET, t, EVENT);
    for (const garbage of ["garbage", "v0=", "v1=" + good.slice(3), good.slice(3), good + "a", "v0=" + "z".repeat(64)]) {
      expectRefused(new SlackSignature(SECRET), request(EVENT, garbage, t), "signature_malformed");
    }
    for (const garbage of ["soon", "1.5e9", `${t}.0`, `-${t}`, " "]) {
      expectRefused(new SlackSignature(SECRET), request(EVENT, good, garbage), "timestamp_malformed");
    }
  });

  describe("url_verification", () => {
    const challenge = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P";
    const body = JSON.stringify({ token: "Jhj5dZrVaK7ZwHHjRyZWjbDl", challenge, type: "url_verification" });

    it("answers the challenge after the signature is verified", () => {
      const auth = new SlackSignature(SECRET);
      const req = signed(body);
      expectAccepted(auth, req);
      const answer = auth.handshake?.afterVerify(req, JSON.parse(body));
      expect(answer).to.be.instanceOf(WebhookResponse);
      expect(answer?.status_code).to.equal(200);
      expect(JSON.parse(answer!.payload.toString())).to.deep.equal({ challenge });
    });

    it("reads the raw body when the source's parser kept bytes or text", () => {
      const auth = new SlackSignature(SECRET);
      const req = signed(body);
      expect(auth.handshake?.afterVerify(req, Buffer.from(body))?.status_code).to.equal(200);
      expect(auth.handshake?.afterVerify(req, body)?.status_code).to.equal(200);
    });

    it("leaves ordinary events, odd challenges and a disabled handshake alone", () => {
      const auth = new SlackSignature(SECRET);
      expect(auth.handshake?.afterVerify(signed(EVENT), JSON.parse(EVENT))).to.equal(undefined);
      expect(auth.handshake?.afterVerify(signed("{}"), { type: "url_verification", challenge: 42 })).to.equal(undefined);
      expect(auth.handshake?.afterVerify(signed("{}"), { type: "url_verification", challenge: "x".repeat(5000) })).to.equal(undefined);
      expect(auth.handshake?.afterVerify(signed("[1]"), [1])).to.equal(undefined);
      expect(new SlackSignature(SECRET, { handshake: false }).handshake).to.equal(undefined);
    });

    it("an unsigned url_verification is refused before any handshake", () => {
      expectRefused(new SlackSignature(SECRET), request(body), "signature_missing");
    });
  });
});
