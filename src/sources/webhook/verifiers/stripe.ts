import type { WebhookEvent } from "../webhook-event";
import { bodyTypeEventName } from "../event-names/sender-names";
import type { AuthRequest } from "../auth";
import { decodeDigest } from "./digest";
import { failure, refuse } from "./failures";
import { malformed, requireHeader } from "./header-value";
import { checkOptions } from "./options";
import { normaliseSecrets, type SecretInput } from "./secrets";
import { SignatureVerifier, type Verified } from "./signature-verifier";
import { checkTimestamp, toleranceOption } from "./timestamp";

export interface StripeSignatureOptions {
  /** How far the signed `t=` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
}

const LABEL = "Stripe-Signature";
const ITEM_KEY = /^[A-Za-z0-9_]+$/;
/** Bounds the parsing work a hostile header can cause. */
const MAX_ITEMS = 32;

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...]`, each `v1` an
 * HMAC-SHA256 of `<t>.<raw body>` keyed with the endpoint secret exactly as shown in the
 * dashboard (`whsec_...`, used as-is, not decoded). Several `v1` appear while Stripe rolls a
 * secret; one matching is enough. Other schemes (`v0`) are ignored.
 */
export class StripeSignature extends SignatureVerifier {
  readonly scheme = "stripe";
  readonly credentialHeaders: readonly string[] = ["stripe-signature"];
  readonly toleranceSeconds: number;

  /** Named by the event's `type`: "checkout.session.completed". */
  eventName(event: WebhookEvent): string | undefined {
    return bodyTypeEventName(event);
  }

  constructor(secret: SecretInput, options?: StripeSignatureOptions) {
    const opts = checkOptions("StripeSignature", options, ["toleranceSeconds"]);
    super(normaliseSecrets("StripeSignature", secret));
    this.toleranceSeconds = toleranceOption("StripeSignature", opts.toleranceSeconds);
  }

  protected check(request: AuthRequest): Verified {
    const header = requireHeader(request.headers, "stripe-signature", "signature", LABEL);
    const items = header.split(",");
    if (items.length > MAX_ITEMS) refuse(malformed("signature", LABEL, "has too many items"));
    let timestamp: string | undefined;
    const signatures: Buffer[] = [];
    for (const item of items) {
      const eq = item.indexOf("=");
      const key = eq > 0 ? item.slice(0, eq) : "";
      if (!ITEM_KEY.test(key)) refuse(malformed("signature", LABEL, "is not a list of key=value items"));
      const value = item.slice(eq + 1);
      if (key === "t") {
        if (timestamp !== undefined) refuse(malformed("signature", LABEL, "has more than one t= item"));
        timestamp = value;
      } else if (key === "v1") {
        signatures.push(decodeDigest(value, "hex", 32) ?? refuse(malformed("signature", LABEL, "has a v1 that is not 64 hex digits")));
      }
    }
    if (timestamp === undefined) refuse(failure("timestamp_missing", `${LABEL} header has no t= timestamp`));
    if (signatures.length === 0) refuse(malformed("signature", LABEL, "has no v1 signature"));
    checkTimestamp(timestamp, this.toleranceSeconds, `${LABEL} timestamp`);
    return this.expectMatch(LABEL, "sha256", signatures, [timestamp, ".", request.rawBody]);
  }
}
