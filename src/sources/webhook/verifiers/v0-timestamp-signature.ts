import type { AuthRequest } from "../auth";
import { decodeDigest } from "./digest";
import { refuse } from "./failures";
import { malformed, requireHeader } from "./header-value";
import { SignatureVerifier, type Verified } from "./signature-verifier";
import { checkTimestamp } from "./timestamp";

const PREFIX = "v0=";

/**
 * The scheme Slack and Zoom share: a `v0=<hex HMAC-SHA256 of "v0:<timestamp>:<raw body>">`
 * header and a Unix-seconds timestamp header, checked against `toleranceSeconds`.
 */
export abstract class V0TimestampSignature extends SignatureVerifier {
  abstract readonly toleranceSeconds: number;

  /** Header names as the sender documents them (used in messages; looked up in lower case). */
  protected abstract readonly signatureHeader: string;
  protected abstract readonly timestampHeader: string;

  protected check(request: AuthRequest): Verified {
    const { signatureHeader, timestampHeader } = this;
    const header = requireHeader(request.headers, signatureHeader.toLowerCase(), "signature", signatureHeader);
    const digest = header.startsWith(PREFIX) ? decodeDigest(header.slice(PREFIX.length), "hex", 32) : undefined;
    if (digest === undefined) refuse(malformed("signature", signatureHeader, "is not v0=<64 hex digits>"));
    const timestamp = requireHeader(request.headers, timestampHeader.toLowerCase(), "timestamp", timestampHeader);
    checkTimestamp(timestamp, this.toleranceSeconds, timestampHeader);
    return this.expectMatch(signatureHeader, "sha256", [digest], ["v0:", timestamp, ":", request.rawBody]);
  }
}
