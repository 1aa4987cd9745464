import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { StandardWebhooksSignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY, nowSeconds } from "./helpers";

const SECRET = "whsec_" + randomBytes(32).toString("base64");
const OLD_SECRET = "whsec_" + randomBytes(24).toString("base64");
const BODY = JSON.stringify({ type: "invoice.paid", data: { id: "inv_1", amount: 1200 } });
const MSG_ID = "msg_2LJlb5nHXhUR0U9Sr5Rc1Wwv1Jn";

type Family = "webhook" | "svix";

function signedHeaders(family: Family, body: string, secret = SECRET, seconds = nowSeconds(), id = MSG_ID): Record<string, string> {
  const date = new Date(seconds * 1000);
  const signature = family === "webhook" ? new StandardWebhook(secret).sign(id, date, body) : new SvixWebhook(secret).sign(id, date, body);
  return { [`${family}-id`]: id, [`${family}-timestamp`]: String(seconds), [`${family}-signature`]: signature, "content-type": "application/json" };
}

function request(body: string, headers: Record<string, string>) {
  return authRequest({ headers, body });
}

/** The SDKs' own verifiers, for "what we accept, they accept". */
function sdkAccepts(family: Family, body: string, headers: Record<string, string>, secret = SECRET): boolean {
  try {
    if (family === "webhook") new StandardWebhook(secret).verify(body, headers);
    else new SvixWebhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

describe("StandardWebhooksSignature (webhook-* and svix-* headers)", () => {
  for (const family of ["webhook", "svix"] as const) {
    describe(`${family}-* headers, signed by the ${family === "webhook" ? "standardwebhooks" : "svix"} SDK`, () => {
      it("accepts a signed request, which the SDK also verifies", () => {
        const headers = signedHeaders(family, BODY);
        expectAccepted(new StandardWebhooksSignature(SECRET), request(BODY, headers));
        expect(sdkAccepts(family, BODY, headers)).to.equal(true);
      });

      it("verifies the raw bytes of a non-ASCII body", () => {
        expectAccepted(new StandardWebhooksSignature(SECRET), request(NON_ASCII_BODY, signedHeaders(family, NON_ASCII_BODY)));
      });

      it("refuses a tampered body, id or timestamp", () => {
        const headers = signedHeaders(family, BODY);
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY.replace("1200", "1"), headers), "signature_mismatch");
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, [`${family}-id`]: "msg_other" }), "signature_mismatch");
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, [`${family}-timestamp`]: String(nowSeconds() - 1) }), "signature_mismatch");
      });

      it("refuses another secret; accepts a rotated one", () => {
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, signedHeaders(family, BODY, OLD_SECRET)), "signature_mismatch");
        expectAccepted(new StandardWebhooksSignature([SECRET, OLD_SECRET]), request(BODY, signedHeaders(family, BODY, OLD_SECRET)));
      });

      it("refuses expired and future timestamps", () => {
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, signedHeaders(family, BODY, SECRET, nowSeconds() - 301)), "timestamp_expired");
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, signedHeaders(family, BODY, SECRET, nowSeconds() + 301)), "timestamp_in_future");
        expectAccepted(new StandardWebhooksSignature(SECRET, { toleranceSeconds: 900 }), request(BODY, signedHeaders(family, BODY, SECRET, nowSeconds() - 600)));
      });

      it("refuses each missing header", () => {
        const headers = signedHeaders(family, BODY);
        const without = (name: string) => Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, without(`${family}-signature`)), "signature_missing");
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, without(`${family}-id`)), "id_missing");
        expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, without(`${family}-timestamp`)), "timestamp_missing");
      });

      it("what it accepts, the SDK accepts too", () => {
        const auth = new StandardWebhooksSignature(SECRET);
        for (const body of [BODY, NON_ASCII_BODY, "{}", JSON.stringify("plain text")]) {
          for (const age of [0, 120, 290]) {
            const headers = signedHeaders(family, body, SECRET, nowSeconds() - age, `msg_${age}`);
            expect(auth.verify(request(body, headers))).to.equal(true);
            expect(sdkAccepts(family, body, headers)).to.equal(true);
          }
        }
      });
    });
  }

  it("accepts any of several space-separated signatures, and ignores v1a and unknown versions", () => {
    const headers = signedHeaders("webhook", BODY);
    const other = new StandardWebhook(OLD_SECRET).sign(MSG_ID, new Date(Number(headers["webhook-timestamp"]) * 1000), BODY);
    const list = `${other} v1a,${randomBytes(64).toString("base64")} ${headers["webhook-signature"]} v2,abc`;
    expectAccepted(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, "webhook-signature": list }));
    expect(sdkAccepts("webhook", BODY, { ...headers, "webhook-signature": list })).to.equal(true);
    expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, "webhook-signature": `${other} v1a,abc` }), "signature_mismatch");
  });

  it("accepts when one v1 entry matches although others are malformed, as the SDKs do", () => {
    const headers = signedHeaders("webhook", BODY);
    const good = headers["webhook-signature"];
    for (const list of [`v1,AAAA ${good}`, `garbage ${good}`, `${good} v1,`, `${good}, ${good}`, `v1,!!!! v1a,x ${good}`]) {
      expect(sdkAccepts("webhook", BODY, { ...headers, "webhook-signature": list }), list).to.equal(true);
      expectAccepted(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, "webhook-signature": list }));
    }
    // Malformed entries beside a valid but wrong signature: a mismatch, not a pass.
    const wrong = signedHeaders("webhook", BODY, OLD_SECRET, Number(headers["webhook-timestamp"]))["webhook-signature"];
    expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, "webhook-signature": `v1,AAAA ${wrong}` }), "signature_mismatch");
    expect(sdkAccepts("webhook", BODY, { ...headers, "webhook-signature": `v1,AAAA ${wrong}` })).to.equal(false);
  });

  it("a header with only non-v1 signatures is signature_missing", () => {
    const headers = signedHeaders("webhook", BODY);
    expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, "webhook-signature": "v1a,abc" }), "signature_missing");
  });

  it("refuses garbage signature headers as malformed", () => {
    const headers = signedHeaders("webhook", BODY);
    const good = headers["webhook-signature"];
    for (const garbage of ["garbage", "v1,", "v1,abc", good.replace("v1,", "v1;"), good.slice(0, -2), `${good},`, `${good}, v1,abc`, good.replace("v1,", "")]) {
      expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, "webhook-signature": garbage }), "signature_malformed");
    }
    expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, { ...headers, "webhook-timestamp": "yesterday" }), "timestamp_malformed");
  });

  it("does not mix header families: webhook-signature with svix-id is missing webhook-id", () => {
    const headers = signedHeaders("webhook", BODY);
    const mixed = { "webhook-signature": headers["webhook-signature"], "webhook-timestamp": headers["webhook-timestamp"], "svix-id": MSG_ID };
    expectRefused(new StandardWebhooksSignature(SECRET), request(BODY, mixed), "id_missing");
  });

  it("takes the secret with or without the whsec_ prefix, and refuses a secret that is not base64", () => {
    const headers = signedHeaders("webhook", BODY);
    expectAccepted(new StandardWebhooksSignature(SECRET.slice("whsec_".length)), request(BODY, headers));
    expect(() => new StandardWebhooksSignature("whsec_not base64!")).to.throw(TypeError, /not valid base64/);
    expect(() => new StandardWebhooksSignature("whsec_")).to.throw(TypeError);
  });
});
