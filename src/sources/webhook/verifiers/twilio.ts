import { isUtf8 } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";
import { parse as parseLegacyQuery, stringify as stringifyLegacyQuery } from "node:querystring";
import type { AuthRequest } from "../auth";
import { charsetOf } from "../content-type";
import { parseForm } from "../form-body";
import { isUtf8Name } from "../parse-body";
import { decodeDigest } from "./digest";
import { failure, refuse } from "./failures";
import { headerValue, malformed, requireHeader } from "./header-value";
import { checkOptions } from "./options";
import { normaliseSecrets, type SecretInput } from "./secrets";
import { SignatureVerifier, type Verified } from "./signature-verifier";

export interface TwilioSignatureOptions {
  /**
   * The webhook URL exactly as typed in the Twilio console (scheme, host, path). Twilio signs
   * the URL it called, and behind a TLS-terminating proxy this process cannot see it. The
   * query string verified is the request's, which the event's `query` holds: a query in this
   * URL is replaced by it (or kept as typed when the request's holds the same parameters).
   * Default: the source's `publicUrl`, or the URL rebuilt from trusted proxy headers.
   */
  publicUrl?: string;
}

const LABEL = "X-Twilio-Signature";
const FORM = /^application\/x-www-form-urlencoded\s*(?:;|$)/i;

/**
 * Twilio: `X-Twilio-Signature: <base64 HMAC-SHA1>` keyed with the account's auth token, over
 * the full public URL followed, for form posts, by every parameter name and value sorted by
 * name (a repeated name: its distinct values sorted). JSON bodies are instead covered by a
 * `bodySHA256` query parameter (hex SHA-256 of the raw body) inside the signed URL. As Twilio's
 * own helper library does, the URL is tried with and without the default port and with
 * legacy query-string encoding. A body covered by neither is refused (`body_not_signed`).
 */
export class TwilioSignature extends SignatureVerifier {
  readonly scheme = "twilio";
  readonly credentialHeaders: readonly string[] = ["x-twilio-signature"];
  readonly publicUrl: string | undefined;

  constructor(secret: SecretInput, options?: TwilioSignatureOptions) {
    const opts = checkOptions("TwilioSignature", options, ["publicUrl"]);
    super(normaliseSecrets("TwilioSignature", secret));
    if (opts.publicUrl !== undefined) {
      let url: URL | undefined;
      try {
        url = typeof opts.publicUrl === "string" ? new URL(opts.publicUrl) : undefined;
      } catch {
        url = undefined;
      }
      if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:") || url.hash !== "") {
        throw new TypeError(`TwilioSignature: publicUrl must be an absolute http(s) URL without a #fragment, got ${String(opts.publicUrl)}`);
      }
    }
    this.publicUrl = opts.publicUrl;
  }

  protected check(request: AuthRequest): Verified {
    const header = requireHeader(request.headers, "x-twilio-signature", "signature", LABEL);
    const digest = decodeDigest(header, "base64", 20) ?? refuse(malformed("signature", LABEL, "is not base64 of 20 bytes"));
    const base = this.publicUrl ?? request.publicUrl();
    const parsed = new URL(signedUrl(base, request.url));

    let params = "";
    const contentType = String(headerValue(request.headers, "content-type") ?? "");
    const bodyHashes = parsed.searchParams.getAll("bodySHA256");
    if (bodyHashes.length > 0) {
      const want = bodyHashes.length === 1 ? decodeDigest(bodyHashes[0], "hex", 32) : undefined;
      const got = createHash("sha256").update(request.rawBody).digest();
      if (want === undefined || !timingSafeEqual(want, got)) refuse(failure("signature_mismatch", "bodySHA256 does not match the body"));
    } else if (FORM.test(contentType)) {
      // Twilio signs its parameters as UTF-8 text, and Content-Type is not signed: a form read in
      // another charset would not say what was signed.
      if (!isUtf8Name(charsetOf(contentType))) refuse(failure("body_not_signed", "Twilio signs form parameters as UTF-8; a form in another charset is not what it signed"));
      const form = request.rawBody.toString("utf8");
      params = sortedParams(form);
      // U+FFFD is Twilio's own character, or what the lossy decoding made of bytes that are not
      // UTF-8 (which then verify as any other such bytes): checked strictly, only when present.
      if (params.includes("\uFFFD") && (!isUtf8(request.rawBody) || typeof parseForm(form, "utf-8") === "string")) {
        refuse(failure("body_not_signed", "the form is not valid UTF-8, which Twilio signs"));
      }
    } else if (request.rawBody.length > 0) {
      refuse(failure("body_not_signed", "a body that is neither a form nor covered by bodySHA256 is not signed by Twilio"));
    }

    const urls = urlVariants(parsed);
    // Twilio has been seen to send a configured query reordered while signing it as typed: that
    // URL too, when the query received holds exactly its parameters.
    const configured = base.includes("?") ? new URL(base) : undefined;
    if (configured !== undefined && sameParams(configured.searchParams, parsed.searchParams)) urls.push(...urlVariants(configured));
    const messages = [...new Set(urls)].map((variant) => [variant, params]);
    return this.expectMatch(LABEL, "sha1", [digest], ...messages);
  }
}

/**
 * The configured URL with the request's query string in place of its own: a query kept from the
 * configuration would leave the one received (parameters, `bodySHA256`) unsigned.
 */
function signedUrl(base: string, requestUrl: string): string {
  const b = base.indexOf("?");
  const q = requestUrl.indexOf("?");
  return (b < 0 ? base : base.slice(0, b)) + (q < 0 ? "" : requestUrl.slice(q));
}

/** The same name=value pairs, in any order. */
function sameParams(a: URLSearchParams, b: URLSearchParams): boolean {
  const pairs = (p: URLSearchParams) => [...p].map(([name, value]) => `${name}=${value}`).sort().join("&");
  return pairs(a) === pairs(b);
}

/** Names and values concatenated, sorted by name; a repeated name gives its distinct values sorted. */
function sortedParams(form: string): string {
  const byName = new Map<string, Set<string>>();
  for (const [name, value] of new URLSearchParams(form)) {
    let values = byName.get(name);
    if (values === undefined) byName.set(name, (values = new Set()));
    values.add(value);
  }
  let out = "";
  for (const name of [...byName.keys()].sort()) {
    for (const value of [...(byName.get(name) ?? [])].sort()) out += name + value;
  }
  return out;
}

/** The URL without port, with the default port, and both again with legacy query encoding. */
function urlVariants(url: URL): string[] {
  const withoutPort = new URL(url.href);
  withoutPort.port = "";
  const variants = [withoutPort.href, withPort(url)];
  if (url.search !== "") {
    for (const variant of [...variants]) variants.push(legacyQuery(variant));
  }
  return [...new Set(variants)];
}

function withPort(url: URL): string {
  if (url.port !== "") return url.href;
  const port = url.protocol === "https:" ? ":443" : ":80";
  const auth = url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ""}@` : "";
  return `${url.protocol}//${auth}${url.host}${port}${url.pathname}${url.search}${url.hash}`;
}

function legacyQuery(href: string): string {
  const url = new URL(href);
  const query = stringifyLegacyQuery(parseLegacyQuery(url.search.slice(1)));
  url.search = "";
  return `${url.href}?${query}`;
}
