import type { WebhookEvent } from "../webhook-event";
import { zoomEventName } from "../event-names/sender-names";
import type { AuthRequest } from "../auth";
import { WebhookResponse } from "../webhook-response";
import { jsonObjectOf } from "./json-body";
import { booleanOption, checkOptions } from "./options";
import { normaliseSecrets, type SecretInput } from "./secrets";
import { V0TimestampSignature } from "./v0-timestamp-signature";
import { toleranceOption } from "./timestamp";

export interface ZoomSignatureOptions {
  /** How far `x-zm-request-timestamp` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Answer `endpoint.url_validation` without an event (default true). */
  handshake?: boolean;
}

const SIGNATURE = "x-zm-signature";
const TIMESTAMP = "x-zm-request-timestamp";
const MAX_TOKEN_CHARS = 1024;

/**
 * Zoom: `x-zm-signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw body>">` keyed with the
 * app's secret token, `x-zm-request-timestamp` in Unix seconds. The `endpoint.url_validation`
 * request (sent when the URL is saved and every 72 hours) is verified like any other, then
 * answered with `{plainToken, encryptedToken}`, `encryptedToken` being the hex HMAC-SHA256 of
 * `plainToken` keyed with the current (first) secret token.
 */
export class ZoomSignature extends V0TimestampSignature {
  readonly scheme = "zoom";
  readonly credentialHeaders: readonly string[] = ["x-zm-signature"];
  readonly toleranceSeconds: number;
  protected readonly signatureHeader = SIGNATURE;
  protected readonly timestampHeader = TIMESTAMP;
  declare readonly handshake?: { afterVerify(request: AuthRequest, body: unknown): WebhookResponse | undefined };

  /** Named by the payload's `event`: "meeting.started". */
  eventName(event: WebhookEvent): string | undefined {
    return zoomEventName(event);
  }

  constructor(secret: SecretInput, options?: ZoomSignatureOptions) {
    const opts = checkOptions("ZoomSignature", options, ["toleranceSeconds", "handshake"]);
    super(normaliseSecrets("ZoomSignature", secret));
    this.toleranceSeconds = toleranceOption("ZoomSignature", opts.toleranceSeconds);
    if (booleanOption("ZoomSignature", "handshake", opts.handshake, true)) {
      this.handshake = { afterVerify: (request, body) => this.#urlValidation(request, body) };
    }
  }

  #urlValidation(request: AuthRequest, body: unknown): WebhookResponse | undefined {
    try {
      const json = jsonObjectOf(body, request.rawBody, "endpoint.url_validation");
      if (json === undefined || json.event !== "endpoint.url_validation") return undefined;
      const payload = json.payload;
      const plainToken = typeof payload === "object" && payload !== null ? (payload as Record<string, unknown>).plainToken : undefined;
      if (typeof plainToken !== "string" || plainToken.length === 0 || plainToken.length > MAX_TOKEN_CHARS) return undefined;
      const encryptedToken = this.signWithCurrentSecret("sha256", [plainToken]).toString("hex");
      return new WebhookResponse({ status_code: 200, body: { plainToken, encryptedToken }, headers: { "cache-control": "no-store" } });
    } catch {
      return undefined;
    }
  }
}
