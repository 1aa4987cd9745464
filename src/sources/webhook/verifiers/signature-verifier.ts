import type { AuthFailure, AuthRequest, WebhookAuth } from "../auth";
import { anyDigestMatches, hmac, type HmacAlgorithm } from "./digest";
import { failure, Refusal, refuse, VERIFICATION_ERROR } from "./failures";

/** What the signed bytes are made of, concatenated: strings as UTF-8, Buffers as-is. */
export type SignedMessage = readonly (string | Buffer)[];

/** Proof that a comparison succeeded; only {@link SignatureVerifier.expectMatch} can make one. */
const VERIFIED: unique symbol = Symbol("verified");
export type Verified = typeof VERIFIED;

/**
 * The frame every sender's verifier shares, built to fail closed:
 * - `check` refuses by throwing a {@link Refusal}; any other exception is also a refusal
 *   (`verification_error`), never a pass and never a 500;
 * - a request passes only when `check` returns the `Verified` token, and the only way to get
 *   one is a successful constant-time comparison in `expectMatch`; a `check` that forgets to
 *   compare cannot compile, one that returns early cannot pass;
 * - the key bytes live in a #private field: not in `util.inspect`, not in JSON, not in logs.
 */
export abstract class SignatureVerifier implements WebhookAuth {
  abstract readonly scheme: string;
  /** Every signature covers the body, so the source reads it before `verify`. */
  readonly needsBody: boolean = true;
  abstract readonly credentialHeaders: readonly string[];
  /** Set by senders that shake hands (Slack, Meta, Zoom). */
  declare readonly handshake?: WebhookAuth["handshake"];
  readonly #keys: readonly Buffer[];

  protected constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new TypeError("SignatureVerifier: at least one key is required");
    this.#keys = keys;
  }

  verify(request: AuthRequest): true | AuthFailure {
    try {
      return this.check(request) === VERIFIED ? true : VERIFICATION_ERROR;
    } catch (error) {
      return Refusal.is(error) ? error.failure : VERIFICATION_ERROR;
    }
  }

  /** Refuses (throws a Refusal) or returns what `expectMatch` returned. */
  protected abstract check(request: AuthRequest): Verified;

  /**
   * Accepts when one of `candidates` (decoded signatures from the request) equals the HMAC,
   * under any configured secret, of any of `messages` (several when the sender's signed
   * text has variants, as Twilio's URL with and without port). Refuses otherwise.
   */
  protected expectMatch(label: string, algorithm: HmacAlgorithm, candidates: readonly Buffer[], ...messages: SignedMessage[]): Verified {
    const expected: Buffer[] = [];
    for (const key of this.#keys) for (const message of messages) expected.push(hmac(algorithm, key, message));
    if (candidates.length > 0 && anyDigestMatches(expected, candidates)) return VERIFIED;
    return refuse(failure("signature_mismatch", `${label} does not match the request`));
  }

  /** HMAC with the current (first) secret, for handshakes that prove we hold it (Zoom). */
  protected signWithCurrentSecret(algorithm: HmacAlgorithm, message: SignedMessage): Buffer {
    return hmac(algorithm, this.#keys[0], message);
  }

  /** Keeps secrets out of JSON logs. */
  toJSON(): { scheme: string } {
    return { scheme: this.scheme };
  }
}
