import type { WebhookEvent } from "../webhook-event";
import { slackEventName } from "../event-names/sender-names";
import type { AuthRequest } from "../auth";
import { WebhookResponse } from "../webhook-response";
import { jsonObjectOf } from "./json-body";
import { booleanOption, checkOptions } from "./options";
import { normaliseSecrets, type SecretInput } from "./secrets";
import { V0TimestampSignature } from "./v0-timestamp-signature";
import { toleranceOption } from "./timestamp";

export interface SlackSignatureOptions {
  /** How far `X-Slack-Request-Timestamp` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Answer the Events API `url_verification` challenge without an event (default true). */
  handshake?: boolean;
}

const SIGNATURE = "X-Slack-Signature";
const TIMESTAMP = "X-Slack-Request-Timestamp";
const MAX_CHALLENGE_CHARS = 1024;

/**
 * Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw body>">` keyed with the
 * app's signing secret, `X-Slack-Request-Timestamp` in Unix seconds. Covers the Events API
 * (JSON), slash commands and interactivity (form bodies) alike. The Events API's
 * `url_verification` request is answered with its challenge once its signature is verified.
 */
export class SlackSignature extends V0TimestampSignature {
  readonly scheme = "slack";
  readonly credentialHeaders: readonly string[] = ["x-slack-signature"];
  readonly toleranceSeconds: number;
  protected readonly signatureHeader = SIGNATURE;
  protected readonly timestampHeader = TIMESTAMP;
  declare readonly handshake?: { afterVerify(request: AuthRequest, body: unknown): WebhookResponse | undefined };

  /** Named by the Events API `event.type` ("app_mention", "message.im"), a command, or an interaction type. */
  eventName(event: WebhookEvent): string | undefined {
    return slackEventName(event);
  }

  constructor(secret: SecretInput, options?: SlackSignatureOptions) {
    const opts = checkOptions("SlackSignature", options, ["toleranceSeconds", "handshake"]);
    super(normaliseSecrets("SlackSignature", secret));
    this.toleranceSeconds = toleranceOption("SlackSignature", opts.toleranceSeconds);
    if (booleanOption("SlackSignature", "handshake", opts.handshake, true)) {
      this.handshake = { afterVerify: (request, body) => urlVerification(request, body) };
    }
  }
}

/** `{"type": "url_verification", "challenge": "..."}` → 200 `{"challenge": "..."}`. */
function urlVerification(request: AuthRequest, body: unknown): WebhookResponse | undefined {
  try {
    const json = jsonObjectOf(body, request.rawBody, "url_verification");
    if (json === undefined || json.type !== "url_verification") return undefined;
    const challenge = json.challenge;
    if (typeof challenge !== "string" || challenge.length === 0 || challenge.length > MAX_CHALLENGE_CHARS) return undefined;
    return new WebhookResponse({ status_code: 200, body: { challenge }, headers: { "cache-control": "no-store" } });
  } catch {
    return undefined;
  }
}
