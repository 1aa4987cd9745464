import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Transform } from "node:stream";

/** The codings a request body may arrive in, with Node's streaming decoder for each. */
const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  // HTTP's "deflate" is the zlib format (RFC 9110 §8.4.1.2).
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** More codings than this on one body is not a real sender. */
const MAX_CODINGS = 3;

export const SUPPORTED_CODINGS = "gzip, deflate, br, identity";

/**
 * The codings named by a Content-Encoding header, in the order the sender applied them
 * (`identity` dropped); a string naming the first unsupported one instead.
 */
export function contentCodings(header: string): string[] | { unsupported: string } {
  const codings: string[] = [];
  for (const part of header.split(",")) {
    const coding = part.trim().toLowerCase();
    if (coding === "" || coding === "identity") continue;
    if (!Object.hasOwn(DECODERS, coding)) return { unsupported: coding };
    codings.push(coding);
  }
  if (codings.length > MAX_CODINGS) return { unsupported: header.trim() };
  return codings;
}

/** A streaming decoder for one supported coding. */
export function decoderFor(coding: string): Transform {
  return DECODERS[coding]();
}
