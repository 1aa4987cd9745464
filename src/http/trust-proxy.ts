import proxyaddr from "proxy-addr";
import { didYouMean } from "../util/did-you-mean";

const PRESETS = ["loopback", "linklocal", "uniquelocal"];

/**
 * Which peers may speak for the client through X-Forwarded-For / Forwarded:
 * `false` (nobody, the default), `true` (everybody: only behind a proxy that strips these
 * headers), a number of hops, or addresses/CIDRs and the presets "loopback", "linklocal",
 * "uniquelocal".
 */
export type TrustProxy = boolean | number | string | readonly string[];

export type TrustFunction = (address: string, hop: number) => boolean;

export function compileTrust(trust: TrustProxy | undefined): TrustFunction {
  if (trust === undefined || trust === false) return () => false;
  if (trust === true) return () => true;
  if (typeof trust === "number") {
    if (!Number.isInteger(trust) || trust < 0) throw new TypeError(`trustProxy: hop count must be a non-negative integer, got ${trust}`);
    return (_address, hop) => hop < trust;
  }
  const list = typeof trust === "string" ? trust.split(",").map((s) => s.trim()).filter(Boolean) : [...trust];
  try {
    return proxyaddr.compile(list);
  } catch (error) {
    // A misspelt preset reads as an address: name the preset it is likely to be.
    const word = list.find((item) => /^[a-z]+$/i.test(item) && !PRESETS.includes(item));
    const guess = word === undefined ? undefined : didYouMean(word, PRESETS);
    throw new TypeError(`trustProxy: ${(error as Error).message}${guess === undefined ? "" : ` (did you mean "${guess}"?)`}`);
  }
}
