import type { WebhookEvent } from "../webhook-event";
import { shopifyEventName } from "../event-names/sender-names";
import type { AuthRequest } from "../auth";
import { decodeDigest } from "./digest";
import { refuse } from "./failures";
import { malformed, requireHeader } from "./header-value";
import { checkOptions } from "./options";
import { normaliseSecrets, type SecretInput } from "./secrets";
import { SignatureVerifier, type Verified } from "./signature-verifier";

/** Shopify signs nothing but the body: there is no option beyond the secret. */
export interface ShopifySignatureOptions {}

const LABEL = "X-Shopify-Hmac-Sha256";

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the raw body>` keyed with the app's
 * client secret (API secret key). Shopify signs no timestamp; pair with deduplication on
 * `X-Shopify-Event-Id` against replays.
 */
export class ShopifySignature extends SignatureVerifier {
  readonly scheme = "shopify";
  readonly credentialHeaders: readonly string[] = ["x-shopify-hmac-sha256"];

  /** Named by `X-Shopify-Topic`: "orders/create". */
  eventName(event: WebhookEvent): string | undefined {
    return shopifyEventName(event);
  }

  constructor(secret: SecretInput, options?: ShopifySignatureOptions) {
    checkOptions("ShopifySignature", options, []);
    super(normaliseSecrets("ShopifySignature", secret));
  }

  protected check(request: AuthRequest): Verified {
    const header = requireHeader(request.headers, "x-shopify-hmac-sha256", "signature", LABEL);
    const digest = decodeDigest(header, "base64", 32) ?? refuse(malformed("signature", LABEL, "is not base64 of 32 bytes"));
    return this.expectMatch(LABEL, "sha256", [digest], [request.rawBody]);
  }
}
