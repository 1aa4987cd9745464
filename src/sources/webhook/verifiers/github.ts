import type { WebhookEvent } from "../webhook-event";
import { githubEventName } from "../event-names/sender-names";
import type { AuthRequest } from "../auth";
import { HUB_SIGNATURE_LABEL, readHubSignature256 } from "./hub-signature";
import { checkOptions } from "./options";
import { normaliseSecrets, type SecretInput } from "./secrets";
import { SignatureVerifier, type Verified } from "./signature-verifier";

/** GitHub signs nothing but the body: there is no option beyond the secret. */
export interface GitHubSignatureOptions {}

/**
 * GitHub webhooks: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`, keyed with
 * the webhook secret as UTF-8. The legacy SHA-1 `X-Hub-Signature` is not accepted. GitHub signs
 * no timestamp; pair with deduplication on `X-GitHub-Delivery` against replays.
 */
export class GitHubSignature extends SignatureVerifier {
  readonly scheme = "github";
  readonly credentialHeaders: readonly string[] = ["x-hub-signature-256", "x-hub-signature"];

  /** Named by `X-GitHub-Event` and the payload's `action`: "push", "pull_request.opened". */
  eventName(event: WebhookEvent): string | undefined {
    return githubEventName(event);
  }

  constructor(secret: SecretInput, options?: GitHubSignatureOptions) {
    checkOptions("GitHubSignature", options, []);
    super(normaliseSecrets("GitHubSignature", secret));
  }

  protected check(request: AuthRequest): Verified {
    const digest = readHubSignature256(request.headers);
    return this.expectMatch(HUB_SIGNATURE_LABEL, "sha256", [digest], [request.rawBody]);
  }
}
