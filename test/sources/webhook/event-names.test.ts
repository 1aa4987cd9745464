import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import Stripe from "stripe";
import {
  GitHubSignature,
  MetaSignature,
  ShopifySignature,
  SlackSignature,
  StandardWebhooksSignature,
  StripeSignature,
  ZoomSignature,
  eventNameFrom,
  type WebhookAuth,
  type WebhookEvent,
  type WebhookSourceOptions,
} from "../../../src/index";
import { signRequest } from "../../../src/testing/index";
import { startWebhook, useApps } from "../../helpers/app";
import { send } from "../../helpers/http-client";

type Octokit = typeof import("@octokit/webhooks-methods");

const SECRET = "names-shared-secret";
const WHSEC = "whsec_" + randomBytes(32).toString("base64");
const stripe = new Stripe("sk_test_x");

interface Delivery {
  readonly body: string;
  readonly headers: Record<string, string>;
}

describe("event names per sender, from signed deliveries", () => {
  const makeApp = useApps();
  let octokit: Octokit;
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  before(async () => {
    octokit = await import("@octokit/webhooks-methods");
  });

  /** Sends one delivery to a source with `options`, returns the event its task received. */
  async function receive(options: Partial<WebhookSourceOptions>, delivery: (url: string) => Promise<Delivery> | Delivery): Promise<WebhookEvent> {
    const { source, events } = await startWebhook(makeApp, options);
    const { body, headers } = await delivery(source.url);
    const reply = await send(source.url, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
    expect(reply.status, reply.text).to.equal(202);
    const [received] = await events.waitFor(1);
    return received.event;
  }

  const json = (value: unknown) => JSON.stringify(value);

  it("GitHub: X-GitHub-Event, then the payload's action", async () => {
    const github = async (event: string, payload: unknown): Promise<Delivery> => {
      const body = json(payload);
      return { body, headers: { "x-github-event": event, "x-github-delivery": "d-1", "x-hub-signature-256": await octokit.sign(SECRET, body) } };
    };
    const auth = new GitHubSignature(SECRET);
    expect((await receive({ auth }, () => github("pull_request", { action: "opened", number: 7, pull_request: { title: "t" } }))).name).to.equal("pull_request.opened");
    expect((await receive({ auth }, () => github("push", { ref: "refs/heads/main", commits: [] }))).name).to.equal("push");
    expect((await receive({ auth }, () => github("ping", { zen: "Design for failure." }))).name).to.equal("ping");
  });

  it("Stripe: the event's type (signed with the stripe package)", async () => {
    const payload = json({ id: "evt_1", object: "event", type: "checkout.session.completed", data: { object: { id: "cs_1", object: "checkout.session" } } });
    const event = await receive({ auth: new StripeSignature(WHSEC) }, () => ({
      body: payload,
      headers: { "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload, secret: WHSEC }) },
    }));
    expect(event.name).to.equal("checkout.session.completed");
  });

  const signed = (preset: Parameters<typeof signRequest>[0], secret: string, payload: unknown, extra: Record<string, string> = {}) => (): Delivery => {
    const body = json(payload);
    return { body, headers: { ...signRequest(preset, { secret, body }), ...extra } };
  };

  it("Shopify: X-Shopify-Topic", async () => {
    const event = await receive({ auth: new ShopifySignature(SECRET) }, signed("shopify", SECRET, { id: 1, total_price: "9.99" }, { "x-shopify-topic": "orders/create" }));
    expect(event.name).to.equal("orders/create");
  });

  it("Standard Webhooks and Svix: the payload's type", async () => {
    const event = await receive({ auth: new StandardWebhooksSignature(WHSEC) }, signed("standard-webhooks", WHSEC, { type: "invoice.paid", timestamp: "2026-01-01T00:00:00Z", data: {} }));
    expect(event.name).to.equal("invoice.paid");
  });

  it("Zoom: the payload's event", async () => {
    const event = await receive({ auth: new ZoomSignature(SECRET) }, signed("zoom", SECRET, { event: "meeting.started", event_ts: 1, payload: { object: { id: "1" } } }));
    expect(event.name).to.equal("meeting.started");
  });

  it("Slack: an Events API callback by its inner type, messages by channel type", async () => {
    const auth = new SlackSignature(SECRET);
    const callback = (inner: unknown) => signed("slack", SECRET, { type: "event_callback", team_id: "T1", event: inner });
    expect((await receive({ auth }, callback({ type: "app_mention", text: "hi" }))).name).to.equal("app_mention");
    expect((await receive({ auth }, callback({ type: "message", channel_type: "im", text: "hi" }))).name).to.equal("message.im");
    expect((await receive({ auth }, callback({ type: "message", channel_type: "channel", text: "hi" }))).name).to.equal("message.channels");
    expect((await receive({ auth }, signed("slack", SECRET, { type: "app_rate_limited", minute_rate_limited: 1 }))).name).to.equal("app_rate_limited");
  });

  it("Slack: a message whose channel type is no subscription's (an Object.prototype key among them) is named message", async () => {
    const auth = new SlackSignature(SECRET);
    const message = (channelType: string) => signed("slack", SECRET, { type: "event_callback", team_id: "T1", event: { type: "message", channel_type: channelType, text: "hi" } });
    for (const channelType of ["app_home", "constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect((await receive({ auth }, message(channelType))).name, channelType).to.equal("message");
    }
  });

  it("Slack: a slash command by its command, an interaction by its payload's type", async () => {
    const auth = new SlackSignature(SECRET);
    const form = (fields: Record<string, string>) => (): Delivery => {
      const body = new URLSearchParams(fields).toString();
      return { body, headers: { ...signRequest("slack", { secret: SECRET, body }), "content-type": "application/x-www-form-urlencoded" } };
    };
    expect((await receive({ auth }, form({ command: "/deploy", text: "prod" }))).name).to.equal("/deploy");
    expect((await receive({ auth }, form({ payload: json({ type: "block_actions", actions: [] }) }))).name).to.equal("block_actions");
    expect((await receive({ auth }, form({ payload: "{not json" }))).name).to.equal(undefined);
  });

  it("Meta: <object>.<field>; a delivery mixing fields by its object alone", async () => {
    const auth = new MetaSignature(SECRET);
    const change = (field: string) => ({ field, value: {} });
    const meta = (changes: unknown[]) => signed("meta", SECRET, { object: "whatsapp_business_account", entry: [{ id: "1", changes }] });
    expect((await receive({ auth }, meta([change("messages"), change("messages")]))).name).to.equal("whatsapp_business_account.messages");
    expect((await receive({ auth }, meta([change("messages"), change("statuses")]))).name).to.equal("whatsapp_business_account");
    const messenger = signed("meta", SECRET, { object: "page", entry: [{ id: "1", time: 1, messaging: [{ message: { text: "hi" } }] }] });
    expect((await receive({ auth }, messenger)).name).to.equal("page.messaging");
  });

  it("Meta: entries of another kind than changes or messaging (standby) count as another field", async () => {
    const auth = new MetaSignature(SECRET);
    const page = (...entry: unknown[]) => signed("meta", SECRET, { object: "page", entry });
    const messaging = { id: "1", time: 1, messaging: [{ message: { text: "hi" } }] };
    // Messenger's handover protocol: a secondary receiver's events come as `standby`, not `messaging`.
    const standby = { id: "1", time: 2, standby: [{ message: { text: "for the primary app" } }] };
    expect((await receive({ auth }, page(messaging, standby))).name).to.equal("page");
    expect((await receive({ auth }, page({ ...messaging, standby: standby.standby }))).name).to.equal("page");
    expect((await receive({ auth }, page(standby))).name).to.equal("page");
    // An entry with no events at all does not change the name.
    expect((await receive({ auth }, page(messaging, { id: "2", time: 3 }))).name).to.equal("page.messaging");
  });

  it("a sender's field that is absent or not text gives no name", async () => {
    const body = json({ action: 5 });
    const event = await receive({ auth: new GitHubSignature(SECRET) }, async () => ({ body, headers: { "x-hub-signature-256": await octokit.sign(SECRET, body) } }));
    expect(event.name).to.equal(undefined);
    const typeless = await receive({ auth: new StripeSignature(WHSEC) }, () => ({ body: "{}", headers: { "stripe-signature": stripe.webhooks.generateTestHeaderString({ payload: "{}", secret: WHSEC }) } }));
    expect(typeless.name).to.equal(undefined);
  });

  it("the eventName option names events for any sender, over the verifier's names", async () => {
    const byHeader = await receive({ eventName: (event) => event.headers["x-partner-event"] }, () => ({ body: "{}", headers: { "x-partner-event": "order.created" } }));
    expect(byHeader.name).to.equal("order.created");
    const body = json({ action: "opened" });
    const overridden = await receive({ auth: new GitHubSignature(SECRET), eventName: () => "mine" }, async () => ({
      body,
      headers: { "x-github-event": "pull_request", "x-hub-signature-256": await octokit.sign(SECRET, body) },
    }));
    expect(overridden.name).to.equal("mine");
  });

  it("an eventName that throws or returns something else leaves the event unnamed, and it is still accepted", async () => {
    const thrown = await receive({ eventName: () => { throw new Error("boom"); } }, () => ({ body: "{}", headers: {} }));
    expect(thrown.name).to.equal(undefined);
    const notText = await receive({ eventName: () => 42 as unknown as string }, () => ({ body: "{}", headers: {} }));
    expect(notText.name).to.equal(undefined);
  });

  it("a source without a verifier or eventName names nothing: the event has no name key", async () => {
    const event = await receive({}, () => ({ body: "{}", headers: { "x-github-event": "push" } }));
    expect(event).not.to.have.property("name");
  });

  it("eventNameFrom reads a header (any case) or a body field, text only", async () => {
    const byHeader = await receive({ eventName: eventNameFrom({ header: "X-Partner-Event" }) }, () => ({ body: "{}", headers: { "x-partner-event": "order.created" } }));
    expect(byHeader.name).to.equal("order.created");
    const byField = await receive({ eventName: eventNameFrom({ bodyField: "meta.event" }) }, () => ({ body: json({ meta: { event: "refund.issued" } }), headers: {} }));
    expect(byField.name).to.equal("refund.issued");
    const notText = await receive({ eventName: eventNameFrom({ bodyField: "meta.event" }) }, () => ({ body: json({ meta: { event: 3 } }), headers: {} }));
    expect(notText.name).to.equal(undefined);
  });

  it("eventNameFrom refuses anything but exactly one header or body path", () => {
    const message = "eventName: give exactly one of header (a header name) or bodyField (a dot path into the body, e.g. meta.event)";
    for (const field of [{}, { header: "a", bodyField: "b" }, { header: "" }, { bodyField: "a..b" }, { bodyField: ".a" }, { header: 5 as unknown as string }]) {
      expect(() => eventNameFrom(field), JSON.stringify(field)).to.throw(TypeError, message);
    }
  });

  it("a custom WebhookAuth may name events too", async () => {
    const auth: WebhookAuth = { scheme: "partner", needsBody: false, verify: () => true, eventName: (event) => event.headers["x-kind"] };
    expect((await receive({ auth }, () => ({ body: "{}", headers: { "x-kind": "refund" } }))).name).to.equal("refund");
  });

  it("the name survives the durable store: a task on an embedded store receives it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "names-"));
    dirs.push(dir);
    const body = json({ type: "invoice.paid" });
    const { source, events } = await startWebhook(makeApp, { eventName: () => "invoice.paid" }, { app: { store: "embedded", dataDir: dir } });
    expect((await send(source.url, { method: "POST", body, headers: { "content-type": "application/json" } })).status).to.equal(202);
    const [received] = await events.waitFor(1);
    expect(received.event.name).to.equal("invoice.paid");
  });
});
