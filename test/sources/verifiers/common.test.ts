import { createHmac, randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { inspect } from "node:util";
import { expect } from "chai";
import Stripe from "stripe";
import { Webhook as StandardWebhook } from "standardwebhooks";
import twilio from "twilio";
import type { AuthFailure, AuthRequest, WebhookAuth } from "../../../src/sources/webhook/auth";
import {
  createVerifier,
  GitHubSignature,
  HmacSignature,
  MetaSignature,
  ShopifySignature,
  SlackSignature,
  StandardWebhooksSignature,
  StripeSignature,
  TwilioSignature,
  VERIFIER_ERROR_CODES,
  VERIFIER_TYPES,
  ZoomSignature,
} from "../../../src/sources/webhook/verifiers";
import { authRequest, expectAccepted, expectRefused, hostileValues, nowSeconds, reference } from "./helpers";

/** A verdict as a failure, or undefined for a pass. */
function asFailure(verdict: true | AuthFailure): AuthFailure | undefined {
  return verdict === true ? undefined : verdict;
}

const SECRET = "s3cr3t-value-that-must-never-leak";
const WHSEC = "whsec_" + Buffer.from(SECRET).toString("base64");
const BODY = JSON.stringify({ hello: "wörld" });
const stripe = new Stripe("sk_test_x");

interface Scheme {
  name: string;
  auth: () => WebhookAuth;
  /** A valid signed request. */
  request: () => AuthRequest;
  signatureHeader: string;
  timestampHeader?: string;
}

function req(headers: IncomingHttpHeaders, body = BODY, extra: Partial<AuthRequest> = {}): AuthRequest {
  return { ...authRequest({ headers: { "content-type": "application/json", ...headers }, body }), ...extra };
}

const SCHEMES: Scheme[] = [
  {
    name: "github",
    auth: () => new GitHubSignature(SECRET),
    request: () => req({ "x-hub-signature-256": "sha256=" + createHmac("sha256", SECRET).update(BODY).digest("hex") }),
    signatureHeader: "x-hub-signature-256",
  },
  {
    name: "stripe",
    auth: () => new StripeSignature(SECRET),
    request: () => req({ "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: SECRET }) }),
    signatureHeader: "stripe-signature",
  },
  {
    name: "slack",
    auth: () => new SlackSignature(SECRET),
    request: () => {
      const t = nowSeconds();
      return req({ "x-slack-signature": reference.slack(SECRET, t, BODY), "x-slack-request-timestamp": String(t) });
    },
    signatureHeader: "x-slack-signature",
    timestampHeader: "x-slack-request-timestamp",
  },
  {
    name: "standard-webhooks",
    auth: () => new StandardWebhooksSignature(WHSEC),
    request: () => {
      const t = nowSeconds();
      return req({ "webhook-id": "msg_1", "webhook-timestamp": String(t), "webhook-signature": new StandardWebhook(WHSEC).sign("msg_1", new Date(t * 1000), BODY) });
    },
    signatureHeader: "webhook-signature",
    timestampHeader: "webhook-timestamp",
  },
  {
    name: "shopify",
    auth: () => new ShopifySignature(SECRET),
    request: () => req({ "x-shopify-hmac-sha256": reference.shopify(SECRET, BODY) }),
    signatureHeader: "x-shopify-hmac-sha256",
  },
  {
    name: "twilio",
    auth: () => new TwilioSignature(SECRET),
    request: () => {
      const form = "Body=hi&From=%2B15005550006";
      const signature = twilio.getExpectedTwilioSignature(SECRET, "https://hooks.example.com/hook", { Body: "hi", From: "+15005550006" });
      return req({ "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature }, form);
    },
    signatureHeader: "x-twilio-signature",
  },
  {
    name: "meta",
    auth: () => new MetaSignature(SECRET, { verifyToken: "verify-token-never-leaks" }),
    request: () => req({ "x-hub-signature-256": reference.meta(SECRET, BODY) }),
    signatureHeader: "x-hub-signature-256",
  },
  {
    name: "zoom",
    auth: () => new ZoomSignature(SECRET),
    request: () => {
      const t = nowSeconds();
      return req({ "x-zm-signature": reference.zoom(SECRET, t, BODY), "x-zm-request-timestamp": String(t) });
    },
    signatureHeader: "x-zm-signature",
    timestampHeader: "x-zm-request-timestamp",
  },
  {
    name: "hmac",
    auth: () => new HmacSignature(SECRET, { header: "x-signature", prefix: "sha256=" }),
    request: () => req({ "x-signature": "sha256=" + createHmac("sha256", SECRET).update(BODY).digest("hex") }),
    signatureHeader: "x-signature",
  },
];

describe("every verifier", () => {
  it("covers all nine schemes", () => {
    expect(SCHEMES.map((s) => s.name)).to.deep.equal(["github", "stripe", "slack", "standard-webhooks", "shopify", "twilio", "meta", "zoom", "hmac"]);
  });

  for (const scheme of SCHEMES) {
    describe(scheme.name, () => {
      it("accepts its valid request, needs the body, and names its signature header as a credential", () => {
        const auth = scheme.auth();
        expectAccepted(auth, scheme.request());
        expect(auth.needsBody).to.equal(true);
        expect(auth.scheme).to.equal(scheme.name);
        expect(auth.credentialHeaders).to.include(scheme.signatureHeader);
      });

      it("refuses an empty body that was not signed", () => {
        expectRefused(scheme.auth(), { ...scheme.request(), rawBody: Buffer.alloc(0) }, "signature_mismatch");
      });

      for (const hostile of hostileValues("placeholder-signature-value")) {
        it(`refuses a ${hostile.name} signature header with 401 signature_malformed, never throwing`, () => {
          const valid = scheme.request();
          expectRefused(scheme.auth(), { ...valid, headers: { ...valid.headers, [scheme.signatureHeader]: hostile.value } }, "signature_malformed");
        });
      }

      it("refuses hostile versions of its real signature header", () => {
        const valid = scheme.request();
        const real = valid.headers[scheme.signatureHeader] as string;
        for (const hostile of hostileValues(real)) {
          const verdict = scheme.auth().verify({ ...valid, headers: { ...valid.headers, [scheme.signatureHeader]: hostile.value } });
          if (scheme.name === "standard-webhooks" && hostile.name === "repeated (joined by Node)") {
            // A space-separated list is this scheme's own syntax: one matching entry is enough (as in its SDKs).
            expect(verdict, hostile.name).to.equal(true);
            continue;
          }
          const failure = asFailure(verdict);
          expect(failure?.status, hostile.name).to.equal(401);
          expect(failure?.code, hostile.name).to.be.oneOf(["signature_malformed", "signature_mismatch"]);
        }
      });

      if (scheme.timestampHeader !== undefined) {
        it("refuses hostile timestamp headers", () => {
          const valid = scheme.request();
          const real = valid.headers[scheme.timestampHeader!] as string;
          for (const hostile of hostileValues(real)) {
            const failure = asFailure(scheme.auth().verify({ ...valid, headers: { ...valid.headers, [scheme.timestampHeader!]: hostile.value } }));
            expect(failure?.code, hostile.name).to.be.oneOf(["timestamp_malformed", "timestamp_in_future"]);
          }
          for (const value of ["99999999999999999999999", "1e10", "0x10", "Infinity", "NaN", "１２３"]) {
            const failure = asFailure(scheme.auth().verify({ ...valid, headers: { ...valid.headers, [scheme.timestampHeader!]: value } }));
            expect(failure?.code, value).to.be.oneOf(["timestamp_malformed", "timestamp_in_future"]);
          }
        });
      }

      it("fails closed when the request itself misbehaves", () => {
        const valid = scheme.request();
        const exploding = new Proxy({}, { get: () => { throw new Error("boom"); } }) as IncomingHttpHeaders;
        expectRefused(scheme.auth(), { ...valid, headers: exploding }, "verification_error");
        expectRefused(scheme.auth(), { ...valid, rawBody: undefined as unknown as Buffer }, "verification_error");
        expectRefused(scheme.auth(), { ...valid, headers: { ...valid.headers, [scheme.signatureHeader]: 42 as unknown as string } }, "signature_malformed");
      });

      it("keeps secrets out of util.inspect, JSON and failure messages", () => {
        const auth = scheme.auth();
        for (const text of [inspect(auth, { showHidden: true, depth: 10 }), JSON.stringify(auth), String(auth)]) {
          expect(text).to.not.include(SECRET);
          expect(text).to.not.include(Buffer.from(SECRET).toString("base64"));
          expect(text).to.not.include("verify-token-never-leaks");
        }
        const valid = scheme.request();
        const signature = String(valid.headers[scheme.signatureHeader]);
        const failure = asFailure(auth.verify({ ...valid, rawBody: Buffer.from("tampered") }));
        expect(JSON.stringify(failure)).to.not.include(SECRET);
        expect(JSON.stringify(failure)).to.not.include(signature.slice(-20));
      });
    });
  }

  it("answers only codes from VERIFIER_ERROR_CODES", () => {
    for (const scheme of SCHEMES) {
      const valid = scheme.request();
      for (const request of [{ ...valid, headers: {} }, { ...valid, rawBody: Buffer.from("x") }]) {
        const failure = asFailure(scheme.auth().verify(request));
        expect(VERIFIER_ERROR_CODES as readonly string[]).to.include(failure?.code);
        expect(failure?.headers?.["www-authenticate"]).to.equal('Signature realm="webhook"');
      }
    }
  });
});

describe("verifier construction", () => {
  const constructors: [string, (secret: unknown) => unknown][] = [
    ["GitHubSignature", (s) => new GitHubSignature(s as string)],
    ["StripeSignature", (s) => new StripeSignature(s as string)],
    ["SlackSignature", (s) => new SlackSignature(s as string)],
    ["StandardWebhooksSignature", (s) => new StandardWebhooksSignature(s as string)],
    ["ShopifySignature", (s) => new ShopifySignature(s as string)],
    ["TwilioSignature", (s) => new TwilioSignature(s as string)],
    ["MetaSignature", (s) => new MetaSignature(s as string)],
    ["ZoomSignature", (s) => new ZoomSignature(s as string)],
    ["HmacSignature", (s) => new HmacSignature(s as string, { header: "x-sig" })],
  ];

  for (const [name, make] of constructors) {
    it(`${name} refuses missing, empty, padded or too many secrets without quoting them`, () => {
      for (const bad of [undefined, "", [], [""], 42, ["ok", 7], " padded ", "trailing\n", Array.from({ length: 17 }, (_, i) => `s${i}`)]) {
        let message = "";
        expect(() => {
          try {
            make(bad);
          } catch (error) {
            message = (error as Error).message;
            throw error;
          }
        }, JSON.stringify(bad)).to.throw(TypeError);
        expect(message.startsWith(name), message).to.equal(true);
        expect(message).to.not.include("padded");
      }
    });
  }

  it("options must be an object of known keys", () => {
    expect(() => new GitHubSignature(SECRET, { toleranceSeconds: 5 } as never)).to.throw(TypeError, /unknown option "toleranceSeconds" \(it takes no options\)/);
    expect(() => new SlackSignature(SECRET, "fast" as never)).to.throw(TypeError, /options must be an object/);
    expect(() => new SlackSignature(SECRET, { handshake: "yes" } as never)).to.throw(TypeError, /handshake must be true or false/);
    expect(() => new ZoomSignature(SECRET, { toleranceSeconds: 100_000 })).to.throw(TypeError, /toleranceSeconds/);
  });
});

describe("createVerifier (the YAML form)", () => {
  it("maps { type, secret, ...options } onto the constructor", () => {
    const made = [
      createVerifier({ type: "github", secret: SECRET }),
      createVerifier({ type: "stripe", secret: [SECRET, "old"], toleranceSeconds: 600 }),
      createVerifier({ type: "slack", secret: SECRET, handshake: false }),
      createVerifier({ type: "standard-webhooks", secret: WHSEC }),
      createVerifier({ type: "svix", secret: WHSEC }),
      createVerifier({ type: "shopify", secret: SECRET }),
      createVerifier({ type: "twilio", secret: SECRET, publicUrl: "https://hooks.example.com/sms" }),
      createVerifier({ type: "meta", secret: SECRET, verifyToken: "t" }),
      createVerifier({ type: "zoom", secret: SECRET }),
      createVerifier({ type: "hmac", secret: SECRET, header: "x-signature", encoding: "base64" }),
    ];
    expect(made.map((v) => v.scheme)).to.deep.equal(["github", "stripe", "slack", "standard-webhooks", "standard-webhooks", "shopify", "twilio", "meta", "zoom", "hmac"]);
    expect((made[1] as StripeSignature).toleranceSeconds).to.equal(600);
    expect(made[2].handshake).to.equal(undefined);
    expect(VERIFIER_TYPES).to.include.members(["github", "stripe", "slack", "standard-webhooks", "svix", "shopify", "twilio", "meta", "zoom", "hmac"]);
  });

  it("verifies like the class it builds", () => {
    const github = SCHEMES[0];
    expectAccepted(createVerifier({ type: "github", secret: SECRET }), github.request());
  });

  it("names unknown types and options", () => {
    expect(() => createVerifier({ type: "gitlab", secret: SECRET } as never)).to.throw(TypeError, /auth\.type: must be one of github, stripe/);
    expect(() => createVerifier({ type: "stripe", secret: SECRET, tolerance: 5 } as never)).to.throw(TypeError, /unknown option "tolerance"/);
    expect(() => createVerifier({ type: "github" } as never)).to.throw(TypeError, /secret/);
    expect(() => createVerifier(null as never)).to.throw(TypeError);
  });

  it("a random whsec_ secret from the SDKs round-trips", () => {
    const secret = "whsec_" + randomBytes(24).toString("base64");
    const t = nowSeconds();
    const signature = new StandardWebhook(secret).sign("m", new Date(t * 1000), BODY);
    expectAccepted(createVerifier({ type: "svix", secret }), req({ "svix-id": "m", "svix-timestamp": String(t), "svix-signature": signature }));
  });
});
