import type { WebhookEvent } from "../webhook-event";
import { metaEventName } from "../event-names/sender-names";
import type { AuthRequest } from "../auth";
import { constantTimeEqual } from "../constant-time";
import { WebhookResponse } from "../webhook-response";
import { HUB_SIGNATURE_LABEL, readHubSignature256 } from "./hub-signature";
import { checkOptions } from "./options";
import { normaliseSecrets, type SecretInput } from "./secrets";
import { SignatureVerifier, type Verified } from "./signature-verifier";

export interface MetaSignatureOptions {
  /**
   * The "Verify Token" typed in the app dashboard (or several while changing it). When set,
   * the subscription check `GET ?hub.mode=subscribe&hub.verify_token=...&hub.challenge=...`
   * is answered with the challenge (a wrong token gets 403), even on a POST-only source.
   */
  verifyToken?: string | readonly string[];
}

const PRINTABLE_CHALLENGE = /^[\x21-\x7e]{1,1024}$/;
const TEXT_HEADERS = { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" };

/**
 * Meta (Facebook, Instagram, WhatsApp, Messenger webhooks): `X-Hub-Signature-256:
 * sha256=<hex HMAC-SHA256 of the raw body>` keyed with the app secret; the SHA-1
 * `X-Hub-Signature` is not accepted. Meta signs no timestamp.
 */
export class MetaSignature extends SignatureVerifier {
  readonly scheme = "meta";
  readonly credentialHeaders: readonly string[] = ["x-hub-signature-256", "x-hub-signature"];
  declare readonly handshake?: { readonly methods: readonly string[]; beforeVerify(request: AuthRequest): WebhookResponse | undefined };
  readonly #verifyTokens: readonly string[];

  /** Named `<object>.<field>` ("page.feed"); a delivery mixing fields by its object alone. */
  eventName(event: WebhookEvent): string | undefined {
    return metaEventName(event);
  }

  constructor(secret: SecretInput, options?: MetaSignatureOptions) {
    const opts = checkOptions("MetaSignature", options, ["verifyToken"]);
    super(normaliseSecrets("MetaSignature", secret));
    const tokens = opts.verifyToken;
    if (tokens === undefined) {
      this.#verifyTokens = [];
    } else {
      const list: unknown[] = typeof tokens === "string" ? [tokens] : Array.isArray(tokens) ? [...(tokens as unknown[])] : [];
      if (list.length === 0 || list.some((t) => typeof t !== "string" || t.length === 0 || t.length > 1024)) {
        throw new TypeError("MetaSignature: verifyToken must be a non-empty string (or a list of them) of at most 1024 characters");
      }
      this.#verifyTokens = list as string[];
      this.handshake = { methods: ["GET"], beforeVerify: (request) => this.#subscribe(request) };
    }
  }

  protected check(request: AuthRequest): Verified {
    const digest = readHubSignature256(request.headers);
    return this.expectMatch(HUB_SIGNATURE_LABEL, "sha256", [digest], [request.rawBody]);
  }

  #subscribe(request: AuthRequest): WebhookResponse | undefined {
    try {
      if (request.method !== "GET") return undefined;
      const q = request.url.indexOf("?");
      if (q < 0) return undefined;
      const query = new URLSearchParams(request.url.slice(q + 1));
      const modes = query.getAll("hub.mode");
      if (modes.length === 0) return undefined;
      const tokens = query.getAll("hub.verify_token");
      const challenges = query.getAll("hub.challenge");
      let ok = false;
      if (tokens.length === 1) for (const expected of this.#verifyTokens) ok = constantTimeEqual(tokens[0], expected) || ok;
      if (!ok || modes.length !== 1 || modes[0] !== "subscribe") {
        return new WebhookResponse({
          status_code: 403,
          body: { error: "verify_token_mismatch", message: "hub.verify_token does not match the configured verify token" },
          headers: { "cache-control": "no-store" },
        });
      }
      if (challenges.length !== 1 || !PRINTABLE_CHALLENGE.test(challenges[0])) {
        return new WebhookResponse({
          status_code: 400,
          body: { error: "invalid_challenge", message: "hub.challenge must be one value of printable ASCII" },
          headers: { "cache-control": "no-store" },
        });
      }
      return new WebhookResponse({ status_code: 200, body: challenges[0], headers: TEXT_HEADERS });
    } catch {
      return new WebhookResponse({ status_code: 403, body: { error: "verify_token_mismatch", message: "the subscription check could not be verified" } });
    }
  }
}
