import type { IncomingHttpHeaders } from "node:http";
import { decodeDigest } from "./digest";
import { refuse } from "./failures";
import { malformed, requireHeader } from "./header-value";

const LABEL = "X-Hub-Signature-256";
const PREFIX = "sha256=";

/**
 * Reads `X-Hub-Signature-256: sha256=<64 hex>` (GitHub, Meta) and returns the digest bytes.
 * The SHA-1 `X-Hub-Signature` is never read: a missing SHA-256 header is a refusal.
 */
export function readHubSignature256(headers: IncomingHttpHeaders): Buffer {
  const value = requireHeader(headers, "x-hub-signature-256", "signature", LABEL);
  const digest = value.startsWith(PREFIX) ? decodeDigest(value.slice(PREFIX.length), "hex", 32) : undefined;
  return digest ?? refuse(malformed("signature", LABEL, "is not sha256=<64 hex digits>"));
}

export const HUB_SIGNATURE_LABEL = LABEL;
