import { DIGEST_BYTES, DIGEST_ENCODINGS, HMAC_ALGORITHMS, anyDigestMatches, decodeDigest, hmac, type DigestEncoding, type HmacAlgorithm } from "./digest";
import { WebhookError } from "../webhook-error";
import { MAX_HEADER_CHARS } from "./header-value";
import { missingCredentialMessage } from "../missing-credential";

/** What the handler-level check compares. */
export interface HmacCheck {
  /** The signature header as received, e.g. `event.headers["x-signature"]`; missing is a mismatch. */
  signature: string | readonly string[] | undefined | null;
  /**
   * The body exactly as received: a Buffer (or the exact string). Never a parsed and
   * re-serialised object: that is not what the sender signed, and is refused with a TypeError.
   */
  body: Buffer | Uint8Array | string;
  /** The shared secret (UTF-8 text or key bytes), or several while rotating. */
  secret: string | Buffer | readonly (string | Buffer)[];
  /** Default "sha256". */
  algorithm?: HmacAlgorithm;
  /** How the digest is written in the header (default "hex"). */
  encoding?: DigestEncoding;
  /** Text before the digest in the header, e.g. "sha256=" (default none). */
  prefix?: string;
}

export type HmacCheckFailure = "signature_missing" | "signature_malformed" | "signature_mismatch";

const MESSAGES: Readonly<Record<HmacCheckFailure, string>> = {
  signature_missing: "the signature header is missing",
  signature_malformed: "the signature header is malformed",
  signature_mismatch: "the signature does not match the body",
};

/**
 * Thrown by {@link verifyHmac}. A WebhookError (401, `code`), so a source with
 * `reply: "result"` answers the sender 401 with `{"error": code}`; neither the secret nor the
 * signature is in the message.
 */
export class SignatureError extends WebhookError {
  declare readonly code: HmacCheckFailure;
  constructor(code: HmacCheckFailure) {
    super(401, code, MESSAGES[code]);
    this.name = "SignatureError";
  }
}

/**
 * The seed's handler-level check for senders without a verifier of their own: is `signature`
 * the HMAC (SHA-256, hex by default) of the raw `body` under `secret`? Compared in constant
 * time; hostile header values (repeated, huge, non-ASCII) simply do not match.
 *
 * @returns the failure code, or undefined when the signature matches.
 */
export function checkHmac(check: HmacCheck): HmacCheckFailure | undefined {
  const algorithm = check.algorithm ?? "sha256";
  const encoding = check.encoding ?? "hex";
  const prefix = check.prefix ?? "";
  if (!HMAC_ALGORITHMS.includes(algorithm)) throw new TypeError(`verifyHmac: algorithm must be one of ${HMAC_ALGORITHMS.join(", ")}`);
  if (!DIGEST_ENCODINGS.includes(encoding)) throw new TypeError(`verifyHmac: encoding must be one of ${DIGEST_ENCODINGS.join(", ")}`);
  const body = check.body;
  if (typeof body !== "string" && !(body instanceof Uint8Array)) {
    throw new TypeError("verifyHmac: body must be the raw bytes received (a Buffer or the exact string), not a parsed object");
  }
  const given: unknown = check.secret;
  const secrets: unknown[] = typeof given === "string" || Buffer.isBuffer(given) ? [given] : Array.isArray(given) ? [...(given as unknown[])] : [];
  if (secrets.length === 0) throw new TypeError(missingCredentialMessage("verifyHmac", "the secret", given));
  for (const secret of secrets) {
    if (!(typeof secret === "string" || Buffer.isBuffer(secret)) || secret.length === 0) throw new TypeError(missingCredentialMessage("verifyHmac", "the secret", secret));
  }

  const signature = check.signature;
  if (signature === undefined || signature === null || signature === "") return "signature_missing";
  if (typeof signature !== "string" || signature.length > MAX_HEADER_CHARS || !signature.startsWith(prefix)) return "signature_malformed";
  const digest = decodeDigest(signature.slice(prefix.length), encoding, DIGEST_BYTES[algorithm]);
  if (digest === undefined) return "signature_malformed";
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const expected = (secrets as Array<string | Buffer>).map((secret) => hmac(algorithm, typeof secret === "string" ? Buffer.from(secret, "utf8") : secret, [bytes]));
  return anyDigestMatches(expected, [digest]) ? undefined : "signature_mismatch";
}

/** True when the signature matches; see {@link checkHmac}. */
export function hmacMatches(check: HmacCheck): boolean {
  return checkHmac(check) === undefined;
}

/** Throws a {@link SignatureError} unless the signature matches; see {@link checkHmac}. */
export function verifyHmac(check: HmacCheck): void {
  const code = checkHmac(check);
  if (code !== undefined) throw new SignatureError(code);
}
