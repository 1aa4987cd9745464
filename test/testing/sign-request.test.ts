import { expect } from "chai";
import Stripe from "stripe";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import twilio from "twilio";
import {
  CoreApp,
  GitHubSignature,
  HmacSignature,
  MetaSignature,
  ShopifySignature,
  silentLogger,
  SlackSignature,
  StandardWebhooksSignature,
  StripeSignature,
  TwilioSignature,
  WebhookSource,
  ZoomSignature,
  type WebhookAuth,
} from "../../src/index";
import { signRequest, SIGN_PRESETS, testApp, type SignInit, type SignPreset } from "../../src/testing/index";
import { reference } from "../sources/verifiers/helpers";

type Octokit = typeof import("@octokit/webhooks-methods");

const BODY = JSON.stringify({ id: "evt_1", text: "héllo ✓ 日本語 🎉" });
const SECRET = "s3cret-for-tests";
const SVIX_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("testing: signRequest agrees with the senders' own SDKs", () => {
  let octokit: Octokit;
  before(async () => {
    octokit = await import("@octokit/webhooks-methods");
  });

  it("github: @octokit/webhooks-methods verifies it, and signs the same", async () => {
    const headers = signRequest("github", { secret: SECRET, body: BODY });
    expect(await octokit.verify(SECRET, BODY, headers["x-hub-signature-256"])).to.equal(true);
    expect(headers["x-hub-signature-256"]).to.equal(await octokit.sign(SECRET, BODY));
  });

  it("stripe: constructEvent accepts it, and generateTestHeaderString gives the same header for the same timestamp", () => {
    const stripe = new Stripe("sk_test_not_a_real_key");
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signRequest("stripe", { secret: "whsec_test_abc", body: BODY, timestamp });
    expect(stripe.webhooks.constructEvent(Buffer.from(BODY), headers["stripe-signature"], "whsec_test_abc").id).to.equal("evt_1");
    expect(headers["stripe-signature"]).to.equal(stripe.webhooks.generateTestHeaderString({ payload: BODY, secret: "whsec_test_abc", timestamp }));
  });

  it("standard-webhooks and svix: both SDKs verify it", () => {
    const std = signRequest("standard-webhooks", { secret: SVIX_SECRET, body: BODY, id: "msg_1" });
    expect(Object.keys(std)).to.deep.equal(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(new StandardWebhook(SVIX_SECRET.slice(6)).verify(BODY, std)).to.deep.equal(JSON.parse(BODY));
    const svix = signRequest("svix", { secret: SVIX_SECRET, body: BODY });
    expect(svix["svix-id"]).to.match(/^msg_/);
    expect(new SvixWebhook(SVIX_SECRET).verify(BODY, svix)).to.deep.equal(JSON.parse(BODY));
  });

  it("twilio: validateRequest accepts the form's signature; a JSON body signs through bodySHA256", () => {
    const url = "https://example.com/twilio/sms?tenant=acme";
    const form = "From=%2B15551234567&Body=hello+%E2%9C%93&To=%2B15557654321";
    const headers = signRequest("twilio", { secret: "twilio-token", body: form, url });
    expect(headers["content-type"]).to.equal("application/x-www-form-urlencoded");
    expect(twilio.validateRequest("twilio-token", headers["x-twilio-signature"], url, Object.fromEntries(new URLSearchParams(form)))).to.equal(true);
    const bodyUrl = `https://example.com/twilio/json?bodySHA256=${require("node:crypto").createHash("sha256").update(BODY).digest("hex")}`;
    const json = signRequest("twilio", { secret: "twilio-token", body: BODY, url: bodyUrl });
    expect(twilio.validateRequestWithBody("twilio-token", json["x-twilio-signature"], bodyUrl, BODY)).to.equal(true);
    expect(() => signRequest("twilio", { secret: "t", body: form })).to.throw("url is required");
  });

  it("slack, zoom, meta and shopify: as their documentation computes it", () => {
    const timestamp = 1_700_000_000;
    expect(signRequest("slack", { secret: SECRET, body: BODY, timestamp })).to.deep.equal({ "x-slack-request-timestamp": "1700000000", "x-slack-signature": reference.slack(SECRET, timestamp, BODY) });
    expect(signRequest("zoom", { secret: SECRET, body: BODY, timestamp })).to.deep.equal({ "x-zm-request-timestamp": "1700000000", "x-zm-signature": reference.zoom(SECRET, timestamp, BODY) });
    expect(signRequest("meta", { secret: SECRET, body: BODY })).to.deep.equal({ "x-hub-signature-256": reference.meta(SECRET, BODY) });
    expect(signRequest("shopify", { secret: SECRET, body: BODY })).to.deep.equal({ "x-shopify-hmac-sha256": reference.shopify(SECRET, BODY) });
  });

  it("refuses an unknown preset with a suggestion, an empty secret, and hmac without its options", () => {
    expect(() => signRequest("githib" as SignPreset, { secret: SECRET, body: BODY })).to.throw('unknown preset "githib" (did you mean "github"?)');
    expect(() => signRequest("github", { secret: "", body: BODY })).to.throw("secret must be a non-empty string");
    expect(() => signRequest("hmac", { secret: SECRET, body: BODY })).to.throw("hmac.header is required");
  });
});

describe("testing: what signRequest signs, each preset's verifier accepts (a real app, over HTTP)", () => {
  const HMAC = { header: "x-acme-signature", prefix: "t=", signedPayload: "{timestamp}.{method}.{body}", timestampHeader: "x-acme-time", encoding: "base64" as const };
  const cases: Array<{ preset: SignPreset; auth: WebhookAuth; init?: Partial<SignInit>; secret?: string }> = [
    { preset: "github", auth: new GitHubSignature(SECRET) },
    { preset: "stripe", auth: new StripeSignature(SECRET) },
    { preset: "slack", auth: new SlackSignature(SECRET) },
    { preset: "standard-webhooks", auth: new StandardWebhooksSignature(SVIX_SECRET), secret: SVIX_SECRET },
    { preset: "svix", auth: new StandardWebhooksSignature(SVIX_SECRET), secret: SVIX_SECRET },
    { preset: "shopify", auth: new ShopifySignature(SECRET) },
    { preset: "twilio", auth: new TwilioSignature(SECRET, { publicUrl: "https://example.com/hooks/twilio" }), init: { url: "https://example.com/hooks/twilio", body: "Body=hi&From=x" } },
    { preset: "meta", auth: new MetaSignature(SECRET) },
    { preset: "zoom", auth: new ZoomSignature(SECRET) },
    { preset: "hmac", auth: new HmacSignature(SECRET, HMAC), init: { hmac: HMAC } },
  ];

  it("covers every preset", () => {
    expect(cases.map((c) => c.preset)).to.have.members([...SIGN_PRESETS]);
  });

  for (const { preset, auth, init, secret } of cases) {
    it(`${preset}: 202 signed, 401 with a wrong secret`, async () => {
      const hook = new WebhookSource({ path: `/hooks/${preset}`, port: 0, auth });
      const app = new CoreApp(`sign-${preset}`, { logger: silentLogger });
      app.task({ source: hook }, async () => "ok");
      const t = await testApp(app);
      try {
        const body = init?.body ?? BODY;
        const signed = await t.send(hook, { body, headers: { "content-type": "application/json", ...signRequest(preset, { secret: secret ?? SECRET, body, ...init }) } });
        expect(signed.status, JSON.stringify(signed.body)).to.equal(202);
        expect(signed.result).to.equal("ok");
        const wrongSecret = preset === "standard-webhooks" || preset === "svix" ? "whsec_" + Buffer.from("another secret").toString("base64") : "another secret";
        const forged = await t.send(hook, { body, headers: { "content-type": "application/json", ...signRequest(preset, { secret: wrongSecret, body, ...init }) } });
        expect(forged.status).to.equal(401);
        expect(forged.event).to.equal(undefined);
      } finally {
        await t.stop();
      }
    });
  }
});
