import { createHmac, timingSafeEqual } from "node:crypto";

export type HmacAlgorithm = "sha256" | "sha1" | "sha512";
export type DigestEncoding = "hex" | "base64" | "base64url";

export const HMAC_ALGORITHMS: readonly HmacAlgorithm[] = ["sha256", "sha1", "sha512"];
export const DIGEST_ENCODINGS: readonly DigestEncoding[] = ["hex", "base64", "base64url"];

/** Digest sizes in bytes. */
export const DIGEST_BYTES: Readonly<Record<HmacAlgorithm, number>> = { sha1: 20, sha256: 32, sha512: 64 };

/** HMAC of the concatenated parts; Buffers go in as bytes, strings as UTF-8. */
export function hmac(algorithm: HmacAlgorithm, key: Buffer, parts: readonly (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/**
 * Decodes a received digest strictly: the right alphabet and exactly `bytes` bytes (Node's own
 * decoders skip bad characters silently). Undefined when the text is not such a digest.
 */
export function decodeDigest(text: string, encoding: DigestEncoding, bytes: number): Buffer | undefined {
  if (encoding === "hex") {
    if (text.length !== bytes * 2 || !HEX.test(text)) return undefined;
    return Buffer.from(text, "hex");
  }
  if (encoding === "base64") {
    if (text.length !== Math.ceil(bytes / 3) * 4 || !BASE64.test(text)) return undefined;
    const decoded = Buffer.from(text, "base64");
    return decoded.length === bytes && decoded.toString("base64") === text ? decoded : undefined;
  }
  const bare = text.replace(/=+$/, "");
  if (bare.length !== Math.ceil((bytes * 4) / 3) || !BASE64URL.test(text)) return undefined;
  const decoded = Buffer.from(bare, "base64url");
  return decoded.length === bytes && decoded.toString("base64url") === bare ? decoded : undefined;
}

/**
 * True when any candidate equals any expected digest. Every pair is compared in constant time
 * and nothing short-circuits, so timing tells neither which secret nor which signature matched.
 */
export function anyDigestMatches(expected: readonly Buffer[], candidates: readonly Buffer[]): boolean {
  let ok = false;
  for (const want of expected) {
    for (const got of candidates) {
      ok = (got.length === want.length && timingSafeEqual(got, want)) || ok;
    }
  }
  return ok;
}
