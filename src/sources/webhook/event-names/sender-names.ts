import type { WebhookEvent } from "../webhook-event";

/**
 * How each sender names its events, read from the delivery the way the sender documents it.
 * Every function returns undefined rather than guessing when the field is absent or not text,
 * so a malformed delivery is never routed by a made-up name.
 */

function field(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** GitHub: `X-GitHub-Event`, then `.action` when the payload has one ("pull_request.opened"). */
export function githubEventName(event: WebhookEvent): string | undefined {
  const kind = text(event.headers["x-github-event"]);
  if (kind === undefined) return undefined;
  const action = text(field(event.body, "action"));
  return action === undefined ? kind : `${kind}.${action}`;
}

/** Stripe, Standard Webhooks and Svix: the body's `type` ("checkout.session.completed", "invoice.paid"). */
export function bodyTypeEventName(event: WebhookEvent): string | undefined {
  return text(field(event.body, "type"));
}

/** Shopify: `X-Shopify-Topic` ("orders/create"). */
export function shopifyEventName(event: WebhookEvent): string | undefined {
  return text(event.headers["x-shopify-topic"]);
}

/** Zoom: the body's `event` ("meeting.started"). */
export function zoomEventName(event: WebhookEvent): string | undefined {
  return text(field(event.body, "event"));
}

/** Slack's message subscriptions, by the channel type a `message` event carries. */
const SLACK_MESSAGE_CHANNELS: Readonly<Record<string, string>> = { channel: "channels", group: "groups", im: "im", mpim: "mpim" };

/**
 * Slack: an Events API callback by its inner `event.type` ("app_mention"); a `message` also by
 * its channel type, as Slack names the subscriptions ("message.channels", "message.im"); other
 * Events API envelopes by their `type` ("url_verification", "app_rate_limited"); a slash
 * command by its command ("/deploy"); an interaction by its payload's `type` ("block_actions").
 */
export function slackEventName(event: WebhookEvent): string | undefined {
  const body = event.body;
  const type = text(field(body, "type"));
  if (type === "event_callback") {
    const inner = field(body, "event");
    const innerType = text(field(inner, "type"));
    const channelType = text(field(inner, "channel_type"));
    // Own keys only: "constructor" or "toString" would otherwise name Object.prototype's functions.
    const channel = channelType !== undefined && Object.hasOwn(SLACK_MESSAGE_CHANNELS, channelType) ? SLACK_MESSAGE_CHANNELS[channelType] : undefined;
    return innerType === "message" && channel !== undefined ? `message.${channel}` : innerType;
  }
  if (type !== undefined) return type;
  const command = text(field(body, "command"));
  if (command !== undefined) return command;
  const payload = text(field(body, "payload"));
  if (payload === undefined) return undefined;
  try {
    return text(field(JSON.parse(payload), "type"));
  } catch {
    return undefined;
  }
}

/**
 * Meta: `<object>.<field>` ("page.feed", "whatsapp_business_account.messages"), `field` being
 * the changed field of every change in the delivery (Messenger's `messaging` entries count as
 * the field "messaging"; other lists of events in an entry, as `standby`, as a field of no
 * name). Meta batches changes: a delivery whose changes name several fields
 * is named by its object alone ("page"), so that a task on one field never sees changes of
 * another it did not ask for.
 */
export function metaEventName(event: WebhookEvent): string | undefined {
  const object = text(field(event.body, "object"));
  const entries = field(event.body, "entry");
  if (object === undefined || !Array.isArray(entries)) return undefined;
  const fields = new Set<string>();
  for (const entry of entries) {
    const changes = field(entry, "changes");
    if (Array.isArray(changes)) for (const change of changes) fields.add(text(field(change, "field")) ?? "");
    if (Array.isArray(field(entry, "messaging"))) fields.add("messaging");
    // Events of another kind (Messenger's `standby`, for one) are no field named here.
    if (typeof entry === "object" && entry !== null) {
      for (const [key, value] of Object.entries(entry)) if (key !== "changes" && key !== "messaging" && Array.isArray(value)) fields.add("");
    }
  }
  const [only] = fields;
  return fields.size === 1 && only !== "" ? `${object}.${only}` : object;
}
