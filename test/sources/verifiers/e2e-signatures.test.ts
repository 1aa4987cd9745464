import { createHmac, randomBytes } from "node:crypto";
import { expect } from "chai";
import Stripe from "stripe";
import { Webhook as SvixWebhook } from "svix";
import twilio from "twilio";
import type { WebhookAuth } from "../../../src/index";
import {
  GitHubSignature,
  HmacSignature,
  MetaSignature,
  ShopifySignature,
  SlackSignature,
  StandardWebhooksSignature,
  StripeSignature,
  TwilioSignature,
  verifyHmac,
  ZoomSignature,
} from "../../../src/sources/webhook/verifiers";
import { sleep, startWebhook, useApps } from "../../helpers/app";
import { send } from "../../helpers/http-client";
import { rawRequest } from "../../helpers/raw-http";
import { NON_ASCII_BODY, nowSeconds, reference } from "./helpers";

type Octokit = typeof import("@octokit/webhooks-methods");

const SECRET = "e2e-shared-secret-value";
const WHSEC = "whsec_" + randomBytes(32).toString("base64");
const stripe = new Stripe("sk_test_x");
// Whitespace and key order a re-serialisation would change: only the raw bytes verify.
const PRETTY = '{\n  "b": 1,\n  "a": "caf\\u00e9",   "list": [ 1, 2 ]\n}\n';

interface Case {
  name: string;
  auth: () => WebhookAuth;
  /** Headers that sign `body`. */
  sign: (body: string) => Promise<Record<string, string>> | Record<string, string>;
  signatureHeader: string;
  contentType?: string;
  body?: string;
}

function cases(octokit: () => Octokit): Case[] {
  return [
    { name: "github", auth: () => new GitHubSignature(SECRET), sign: async (b) => ({ "x-hub-signature-256": await octokit().sign(SECRET, b), "x-github-delivery": "d1" }), signatureHeader: "x-hub-signature-256" },
    { name: "stripe", auth: () => new StripeSignature(SECRET), sign: (b) => ({ "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload: b, secret: SECRET }) }), signatureHeader: "stripe-signature" },
    {
      name: "slack",
      auth: () => new SlackSignature(SECRET),
      sign: (b) => ({ "x-slack-signature": reference.slack(SECRET, nowSeconds(), b), "x-slack-request-timestamp": String(nowSeconds()) }),
      signatureHeader: "x-slack-signature",
    },
    {
      name: "standard-webhooks (svix)",
      auth: () => new StandardWebhooksSignature(WHSEC),
      sign: (b) => {
        const t = nowSeconds();
        return { "svix-id": "msg_1", "svix-timestamp": String(t), "svix-signature": new SvixWebhook(WHSEC).sign("msg_1", new Date(t * 1000), b) };
      },
      signatureHeader: "svix-signature",
    },
    { name: "shopify", auth: () => new ShopifySignature(SECRET), sign: (b) => ({ "x-shopify-hmac-sha256": reference.shopify(SECRET, b) }), signatureHeader: "x-shopify-hmac-sha256" },
    { name: "meta", auth: () => new MetaSignature(SECRET), sign: (b) => ({ "x-hub-signature-256": reference.meta(SECRET, b) }), signatureHeader: "x-hub-signature-256" },
    {
      name: "zoom",
      auth: () => new ZoomSignature(SECRET),
      sign: (b) => ({ "x-zm-signature": reference.zoom(SECRET, nowSeconds(), b), "x-zm-request-timestamp": String(nowSeconds()) }),
      signatureHeader: "x-zm-signature",
    },
    {
      name: "hmac",
      auth: () => new HmacSignature(SECRET, { header: "x-signature", prefix: "sha256=" }),
      sign: (b) => ({ "x-signature": "sha256=" + createHmac("sha256", SECRET).update(b).digest("hex") }),
      signatureHeader: "x-signature",
    },
  ];
}

describe("verifiers end to end (real sockets)", () => {
  const makeApp = useApps();
  let octokit: Octokit;
  before(async () => {
    octokit = await import("@octokit/webhooks-methods");
  });

  for (const c of cases(() => octokit)) {
    describe(c.name, () => {
      it("accepts the raw bytes it was signed over (pretty JSON and non-ASCII), and strips the signature from the event", async () => {
        const { source, events } = await startWebhook(makeApp, { auth: c.auth() });
        for (const body of [PRETTY, NON_ASCII_BODY]) {
          const reply = await send(source.url, { body, headers: { "content-type": "application/json", ...(await c.sign(body)) } });
          expect(reply.status, reply.text).to.equal(202);
        }
        const received = await events.waitFor(2);
        expect(received[0].event.body).to.deep.equal(JSON.parse(PRETTY));
        expect(received[1].event.body).to.deep.equal(JSON.parse(NON_ASCII_BODY));
        expect(received[0].ctx.rawBody.toString("utf8")).to.equal(PRETTY);
        for (const { event } of received) expect(event.headers).to.not.have.property(c.signatureHeader);
      });

      it("answers a tampered body, a missing signature and a re-serialised body with 401 and a stable code, and makes no event", async () => {
        const { source, events } = await startWebhook(makeApp, { auth: c.auth() });
        const signed = await c.sign(PRETTY);
        const tampered = await send(source.url, { body: PRETTY.replace('"b": 1', '"b": 2'), headers: { "content-type": "application/json", ...signed } });
        expect(tampered.status).to.equal(401);
        expect(tampered.json()).to.deep.include({ error: "signature_mismatch" });
        expect(tampered.headers.get("www-authenticate")).to.equal('Signature realm="webhook"');
        expect(tampered.text).to.not.include(SECRET);

        const { [c.signatureHeader]: _signature, ...unsigned } = signed;
        const missing = await send(source.url, { body: PRETTY, headers: { "content-type": "application/json", ...unsigned } });
        expect(missing.status).to.equal(401);
        expect(missing.json().error).to.equal("signature_missing");

        const reparsed = JSON.stringify(JSON.parse(PRETTY));
        const reserialised = await send(source.url, { body: reparsed, headers: { "content-type": "application/json", ...signed } });
        expect(reserialised.status).to.equal(401);
        await sleep(50);
        expect(events.count).to.equal(0);
      });

      it("answers hostile signature headers on the wire (non-ASCII bytes, repeated, huge) with 401, never 500", async () => {
        const { source, events } = await startWebhook(makeApp, { auth: c.auth() });
        const signed = await c.sign(PRETTY);
        const good = signed[c.signatureHeader];
        const others = Object.entries(signed).filter(([name]) => name !== c.signatureHeader).map(([n, v]) => `${n}: ${v}\r\n`).join("");
        const wire = (signatureLines: Buffer) =>
          Buffer.concat([
            Buffer.from(`POST /hook HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(PRETTY)}\r\nConnection: close\r\n${others}`, "latin1"),
            signatureLines,
            Buffer.from(`\r\n${PRETTY}`, "utf8"),
          ]);
        const hostile = [
          Buffer.concat([Buffer.from(`${c.signatureHeader}: ${good.slice(0, -2)}`, "latin1"), Buffer.from([0xc3, 0xa9]), Buffer.from("\r\n")]),
          Buffer.from(`${c.signatureHeader}: ${good}\r\n${c.signatureHeader}: ${good}\r\n`, "latin1"),
          Buffer.from(`${c.signatureHeader}: ${good}${"A".repeat(6000)}\r\n`, "latin1"),
        ];
        if (c.name.startsWith("standard-webhooks")) {
          // Node joins the repeated header into a space-separated list, this scheme's own syntax:
          // one matching entry is enough, as in its SDKs.
          const repeated = await rawRequest(source.port, wire(hostile.splice(1, 1)[0]));
          expect(repeated.status, repeated.text).to.equal(202);
          await events.waitFor(1);
          events.received.length = 0;
        }
        for (const lines of hostile) {
          const reply = await rawRequest(source.port, wire(lines));
          expect(reply.status, reply.text).to.equal(401);
          expect(reply.json().error).to.match(/^signature_(malformed|mismatch)$/);
        }
        await sleep(50);
        expect(events.count).to.equal(0);
      });
    });
  }

  describe("twilio behind a TLS-terminating proxy", () => {
    const params = { AccountSid: "AC1", From: "+15005550006", Body: "Grüße 🎉" };
    const form = new URLSearchParams(params).toString();

    it("verifies against the URL the proxy was called on (trusted X-Forwarded-Proto/Host)", async () => {
      const { source, events } = await startWebhook(makeApp, { auth: new TwilioSignature(SECRET), trustProxy: "loopback" });
      const signature = twilio.getExpectedTwilioSignature(SECRET, "https://hooks.example.com/hook?tenant=acme", params);
      const headers = { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature, "x-forwarded-proto": "https", "x-forwarded-host": "hooks.example.com" };
      const reply = await send(source.url + "?tenant=acme", { body: form, headers });
      expect(reply.status, reply.text).to.equal(202);
      const [{ event }] = await events.waitFor(1);
      expect(event.body).to.deep.equal(params);
      expect(event.headers).to.not.have.property("x-twilio-signature");
      // Without the proxy's headers the URL is http://127.0.0.1:<port>/hook: not what Twilio signed.
      const direct = await send(source.url + "?tenant=acme", { body: form, headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature } });
      expect(direct.status).to.equal(401);
      expect(direct.json().error).to.equal("signature_mismatch");
    });

    it("ignores forwarded headers from an untrusted peer", async () => {
      const { source } = await startWebhook(makeApp, { auth: new TwilioSignature(SECRET) });
      const signature = twilio.getExpectedTwilioSignature(SECRET, "https://hooks.example.com/hook", params);
      const reply = await send(source.url, { body: form, headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature, "x-forwarded-proto": "https", "x-forwarded-host": "hooks.example.com" } });
      expect(reply.status).to.equal(401);
    });

    it("verifies against the source's configured publicUrl, or the verifier's own", async () => {
      const signature = twilio.getExpectedTwilioSignature(SECRET, "https://hooks.example.com/sms", params);
      const headers = { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature };
      const viaSource = await startWebhook(makeApp, { auth: new TwilioSignature(SECRET), publicUrl: "https://hooks.example.com/sms" });
      expect((await send(viaSource.source.url, { body: form, headers })).status).to.equal(202);
      const viaVerifier = await startWebhook(makeApp, { auth: new TwilioSignature(SECRET, { publicUrl: "https://hooks.example.com/sms" }) });
      expect((await send(viaVerifier.source.url, { body: form, headers })).status).to.equal(202);
    });
  });

  describe("the handler-level check (verifyHmac with ctx.rawBody)", () => {
    it("lets a handler verify a sender without a preset, answering 401 when it throws under reply: result", async () => {
      const { source, events } = await startWebhook(
        makeApp,
        { reply: "result" },
        {
          reply: (ctx, event) => {
            verifyHmac({ signature: event.headers["x-signature"], body: ctx.rawBody, secret: SECRET });
            return { ok: true };
          },
          retry: { attempts: 1 },
        },
      );
      const good = createHmac("sha256", SECRET).update(PRETTY).digest("hex");
      const accepted = await send(source.url, { body: PRETTY, headers: { "content-type": "application/json", "x-signature": good } });
      expect(accepted.status, accepted.text).to.equal(200);
      expect(accepted.json()).to.deep.equal({ ok: true });
      const refused = await send(source.url, { body: PRETTY + " ", headers: { "content-type": "application/json", "x-signature": good } });
      expect(refused.status).to.equal(401);
      expect(refused.json().error).to.equal("signature_mismatch");
      await events.waitFor(2);
    });
  });
});
