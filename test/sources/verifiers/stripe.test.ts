import { expect } from "chai";
import Stripe from "stripe";
import { StripeSignature } from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, NON_ASCII_BODY, nowSeconds } from "./helpers";

const stripe = new Stripe("sk_test_not_a_real_key");
const SECRET = "whsec_test_5Wm1lYkRrYWNrZXJfc2VjcmV0X2tleQ";
const OLD_SECRET = "whsec_test_previous_secret_value";
const BODY = JSON.stringify({ id: "evt_1", object: "event", type: "payment_intent.succeeded", data: { object: { id: "pi_1" } } }, null, 2);

function header(payload: string, secret = SECRET, timestamp = nowSeconds()): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

function request(body: string, signature?: string) {
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (signature !== undefined) headers["stripe-signature"] = signature;
  return authRequest({ headers, body });
}

/** Stripe's own verifier, for "what we accept, Stripe accepts". */
function stripeAccepts(body: string, signature: string, secret = SECRET): boolean {
  try {
    stripe.webhooks.constructEvent(Buffer.from(body), signature, secret);
    return true;
  } catch {
    return false;
  }
}

describe("StripeSignature (Stripe-Signature)", () => {
  it("accepts a header made by stripe.webhooks.generateTestHeaderString, which constructEvent accepts too", () => {
    const signature = header(BODY);
    expectAccepted(new StripeSignature(SECRET), request(BODY, signature));
    expect(stripeAccepts(BODY, signature)).to.equal(true);
  });

  it("uses the whsec_ secret as-is (not base64-decoded)", () => {
    expectAccepted(new StripeSignature("whsec_!!not base64!!"), request(BODY, header(BODY, "whsec_!!not base64!!")));
  });

  it("verifies the raw bytes of a non-ASCII body", () => {
    const signature = header(NON_ASCII_BODY);
    expectAccepted(new StripeSignature(SECRET), request(NON_ASCII_BODY, signature));
    expect(stripeAccepts(NON_ASCII_BODY, signature)).to.equal(true);
  });

  it("refuses a tampered body", () => {
    const signature = header(BODY);
    expectRefused(new StripeSignature(SECRET), request(BODY.replace("pi_1", "pi_2"), signature), "signature_mismatch");
    expectRefused(new StripeSignature(SECRET), request(JSON.stringify(JSON.parse(BODY)), signature), "signature_mismatch");
  });

  it("refuses a signature made with another secret", () => {
    expectRefused(new StripeSignature(SECRET), request(BODY, header(BODY, "whsec_other")), "signature_mismatch");
  });

  it("refuses a signature whose timestamp was swapped", () => {
    const signature = header(BODY, SECRET, nowSeconds() - 10);
    const swapped = signature.replace(/^t=\d+/, `t=${nowSeconds()}`);
    expectRefused(new StripeSignature(SECRET), request(BODY, swapped), "signature_mismatch");
  });

  it("accepts a rotated secret, and a header carrying several v1 (Stripe rolling a secret)", () => {
    const t = nowSeconds();
    expectAccepted(new StripeSignature([SECRET, OLD_SECRET]), request(BODY, header(BODY, OLD_SECRET, t)));
    const v1Old = header(BODY, OLD_SECRET, t).split(",")[1];
    const v1New = header(BODY, SECRET, t).split(",")[1];
    const both = `t=${t},${v1Old},${v1New},v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39`;
    expectAccepted(new StripeSignature(SECRET), request(BODY, both));
    expect(stripeAccepts(BODY, both)).to.equal(true);
    expectRefused(new StripeSignature("whsec_third"), request(BODY, both), "signature_mismatch");
  });

  it("refuses an expired timestamp (default tolerance 300 s) and accepts one just inside", () => {
    const auth = new StripeSignature(SECRET);
    expectRefused(auth, request(BODY, header(BODY, SECRET, nowSeconds() - 301)), "timestamp_expired");
    expectAccepted(auth, request(BODY, header(BODY, SECRET, nowSeconds() - 295)));
    expect(stripeAccepts(BODY, header(BODY, SECRET, nowSeconds() - 301))).to.equal(false);
  });

  it("refuses a timestamp too far in the future", () => {
    const auth = new StripeSignature(SECRET);
    expectRefused(auth, request(BODY, header(BODY, SECRET, nowSeconds() + 301)), "timestamp_in_future");
    expectAccepted(auth, request(BODY, header(BODY, SECRET, nowSeconds() + 60)));
  });

  it("honours toleranceSeconds", () => {
    const auth = new StripeSignature(SECRET, { toleranceSeconds: 30 });
    expect(auth.toleranceSeconds).to.equal(30);
    expectRefused(auth, request(BODY, header(BODY, SECRET, nowSeconds() - 60)), "timestamp_expired");
    expectAccepted(new StripeSignature(SECRET, { toleranceSeconds: 600 }), request(BODY, header(BODY, SECRET, nowSeconds() - 500)));
  });

  it("refuses a missing header", () => {
    expectRefused(new StripeSignature(SECRET), request(BODY), "signature_missing");
  });

  it("refuses garbage headers as malformed, and a header without t= or v1=", () => {
    const good = header(BODY);
    const t = good.split(",")[0];
    for (const garbage of ["garbage", "t=", ",,,", `${t},v1=xyz`, `${t},v1=${"a".repeat(63)}`, `${t}, v1=${good.split("v1=")[1]}`, `${t},${t},v1=${good.split("v1=")[1]}`, `${t},v0=${"a".repeat(64)}`, `${t}`]) {
      expectRefused(new StripeSignature(SECRET), request(BODY, garbage), "signature_malformed");
    }
    expectRefused(new StripeSignature(SECRET), request(BODY, `v1=${good.split("v1=")[1]}`), "timestamp_missing");
    expectRefused(new StripeSignature(SECRET), request(BODY, `t=12ab,v1=${good.split("v1=")[1]}`), "timestamp_malformed");
    expectRefused(new StripeSignature(SECRET), request(BODY, `t=-5,v1=${good.split("v1=")[1]}`), "timestamp_malformed");
  });

  it("what it accepts, Stripe's constructEvent accepts too", () => {
    const auth = new StripeSignature(SECRET);
    for (const body of [BODY, NON_ASCII_BODY, "{}", JSON.stringify({ a: "\u2028" })]) {
      for (const age of [0, 100, 299]) {
        const signature = header(body, SECRET, nowSeconds() - age);
        expect(auth.verify(request(body, signature))).to.equal(true);
        expect(stripeAccepts(body, signature)).to.equal(true);
      }
    }
  });

  it("rejects bad options at construction", () => {
    expect(() => new StripeSignature(SECRET, { toleranceSeconds: 0 })).to.throw(TypeError, /toleranceSeconds/);
    expect(() => new StripeSignature(SECRET, { toleranceSeconds: -1 })).to.throw(TypeError, /toleranceSeconds/);
    expect(() => new StripeSignature(SECRET, { tolerance: 30 } as never)).to.throw(TypeError, /unknown option "tolerance"/);
  });
});
