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

export interface StandardWebhooksSignatureOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
}

const VERSIONED = /^(v[0-9]+[a-z]*),(.+)$/;
/** Bounds the work a hostile header can cause. */
const MAX_SIGNATURES = 32;

const NAMES = {
  webhook: { id: "webhook-id", timestamp: "webhook-timestamp", signature: "webhook-signature" },
  svix: { id: "svix-id", timestamp: "svix-timestamp", signature: "svix-signature" },
} as const;

/**
 * Standard Webhooks (and Svix, which sends the same scheme under `svix-*` names):
 * `webhook-signature: v1,<base64> [v1,<base64> ...]`, each an HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<raw body>`. Secrets are `whsec_<base64>`: the prefix is
 * dropped and the rest base64-decoded into the key. Several space-separated signatures may be
 * sent (the sender rotating); one matching is enough, even beside malformed entries, which are
 * skipped as the reference libraries skip them. Asymmetric `v1a` signatures are ignored.
 */
export class StandardWebhooksSignature extends SignatureVerifier {
  readonly scheme = "standard-webhooks";
  readonly credentialHeaders: readonly string[] = ["webhook-signature", "svix-signature"];
  readonly toleranceSeconds: number;

  /** Named by the payload's `type`, as Standard Webhooks prescribes: "invoice.paid". */
  eventName(event: WebhookEvent): string | undefined {
    return bodyTypeEventName(event);
  }

  constructor(secret: SecretInput, options?: StandardWebhooksSignatureOptions) {
    const opts = checkOptions("StandardWebhooksSignature", options, ["toleranceSeconds"]);
    super(normaliseSecrets("StandardWebhooksSignature", secret, "base64", "whsec_"));
    this.toleranceSeconds = toleranceOption("StandardWebhooksSignature", opts.toleranceSeconds);
  }

  protected check(request: AuthRequest): Verified {
    const headers = request.headers;
    // One family or the other, never a mix of both.
    const names = headers["webhook-signature"] === undefined && headers["svix-signature"] !== undefined ? NAMES.svix : NAMES.webhook;
    const header = requireHeader(headers, names.signature, "signature", names.signature);
    const id = requireHeader(headers, names.id, "id", names.id);
    const timestamp = requireHeader(headers, names.timestamp, "timestamp", names.timestamp);

    const tokens = header.split(" ").filter((token) => token.length > 0);
    if (tokens.length === 0) refuse(malformed("signature", names.signature, "holds no signature"));
    if (tokens.length > MAX_SIGNATURES) refuse(malformed("signature", names.signature, "has too many signatures"));
    // As the reference libraries do, a malformed entry is skipped: another may still match.
    // Only when no entry is a well-formed v1 signature is the header refused, naming why.
    const signatures: Buffer[] = [];
    let problem: string | undefined;
    for (const token of tokens) {
      const match = VERSIONED.exec(token);
      if (!match) {
        problem ??= "is not a list of <version>,<signature>";
        continue;
      }
      if (match[1] !== "v1") continue;
      const digest = decodeDigest(match[2], "base64", 32);
      if (digest !== undefined) signatures.push(digest);
      else problem ??= "has a v1 signature that is not base64 of 32 bytes";
    }
    if (signatures.length === 0) {
      refuse(problem !== undefined ? malformed("signature", names.signature, problem) : failure("signature_missing", `${names.signature} header has no v1 signature`));
    }
    checkTimestamp(timestamp, this.toleranceSeconds, names.timestamp);
    return this.expectMatch(names.signature, "sha256", signatures, [id, ".", timestamp, ".", request.rawBody]);
  }
}
