import type { AuthRequest } from "../auth";
import { DIGEST_BYTES, DIGEST_ENCODINGS, decodeDigest, HMAC_ALGORITHMS, type DigestEncoding, type HmacAlgorithm } from "./digest";
import { refuse } from "./failures";
import { malformed, requireHeader } from "./header-value";
import { checkOptions, choiceOption } from "./options";
import { normaliseSecrets, type SecretEncoding, type SecretInput } from "./secrets";
import { SignatureVerifier, type SignedMessage, type Verified } from "./signature-verifier";
import { checkTimestamp, toleranceOption, type TimestampUnit } from "./timestamp";

export interface HmacSignatureOptions {
  /** Header holding the signature, e.g. "x-signature" (any case). Required. */
  header: string;
  /** Hash (default "sha256"). */
  algorithm?: HmacAlgorithm;
  /** How the digest is written in the header (default "hex"; "base64", "base64url"). */
  encoding?: DigestEncoding;
  /** Text before the digest in the header, e.g. "sha256=" (default none). */
  prefix?: string;
  /**
   * What is signed, as a template (default "{body}"). Placeholders: `{body}` (the raw bytes,
   * required), `{timestamp}` (needs `timestampHeader`), `{method}`, `{url}` (path and query as
   * received), `{publicUrl}` (the URL the sender called), `{header:<name>}` (another header's
   * value). Everything else is literal text, e.g. "v0:{timestamp}:{body}".
   */
  signedPayload?: string;
  /** Header carrying a signed timestamp; when set, `{timestamp}` must be in `signedPayload`. */
  timestampHeader?: string;
  /** How far the timestamp may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Unit of the timestamp header (default "seconds"). */
  timestampUnit?: TimestampUnit;
  /** How the secret string turns into key bytes (default "utf8"; "base64", "hex"). */
  secretEncoding?: SecretEncoding;
}

type Part =
  | { kind: "text"; text: string }
  | { kind: "body" | "timestamp" | "method" | "url" | "publicUrl" }
  | { kind: "header"; name: string };

const PLACEHOLDER = /\{([A-Za-z]+)(?::([!#$%&'*+.^_`|~0-9A-Za-z-]+))?\}/g;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Any sender that signs with an HMAC the senders above do not cover: which header, which hash,
 * hex or base64, what prefix, and what is signed (a template over the raw body, a timestamp
 * header, the method, URL and other headers). Example (Square):
 * `{ header: "x-square-hmacsha256-signature", encoding: "base64", signedPayload: "{publicUrl}{body}" }`.
 */
export class HmacSignature extends SignatureVerifier {
  readonly scheme = "hmac";
  readonly credentialHeaders: readonly string[];
  readonly header: string;
  readonly algorithm: HmacAlgorithm;
  readonly encoding: DigestEncoding;
  readonly prefix: string;
  readonly signedPayload: string;
  readonly timestampHeader: string | undefined;
  readonly toleranceSeconds: number;
  readonly timestampUnit: TimestampUnit;
  readonly #parts: readonly Part[];

  constructor(secret: SecretInput, options: HmacSignatureOptions) {
    const owner = "HmacSignature";
    const opts = checkOptions(owner, options, [
      "header", "algorithm", "encoding", "prefix", "signedPayload", "timestampHeader", "toleranceSeconds", "timestampUnit", "secretEncoding",
    ]);
    const secretEncoding = choiceOption<SecretEncoding>(owner, "secretEncoding", opts.secretEncoding, ["utf8", "base64", "hex"], "utf8");
    super(normaliseSecrets(owner, secret, secretEncoding));
    this.header = headerName(owner, "header", opts.header);
    this.algorithm = choiceOption(owner, "algorithm", opts.algorithm, HMAC_ALGORITHMS, "sha256");
    this.encoding = choiceOption(owner, "encoding", opts.encoding, DIGEST_ENCODINGS, "hex");
    if (opts.prefix !== undefined && (typeof opts.prefix !== "string" || !/^[\x20-\x7e]*$/.test(opts.prefix))) {
      throw new TypeError(`${owner}: prefix must be a string of printable ASCII`);
    }
    this.prefix = opts.prefix ?? "";
    this.timestampHeader = opts.timestampHeader === undefined ? undefined : headerName(owner, "timestampHeader", opts.timestampHeader);
    this.toleranceSeconds = toleranceOption(owner, opts.toleranceSeconds);
    this.timestampUnit = choiceOption<TimestampUnit>(owner, "timestampUnit", opts.timestampUnit, ["seconds", "milliseconds"], "seconds");
    if (opts.signedPayload !== undefined && typeof opts.signedPayload !== "string") throw new TypeError(`${owner}: signedPayload must be a string`);
    this.signedPayload = opts.signedPayload ?? "{body}";
    this.#parts = parseTemplate(owner, this.signedPayload);
    const usesTimestamp = this.#parts.some((p) => p.kind === "timestamp");
    if (usesTimestamp && this.timestampHeader === undefined) throw new TypeError(`${owner}: signedPayload uses {timestamp} but timestampHeader is not set`);
    if (!usesTimestamp && this.timestampHeader !== undefined) {
      throw new TypeError(`${owner}: timestampHeader is set but signedPayload does not sign {timestamp}, so it would guard against nothing`);
    }
    this.credentialHeaders = [this.header];
  }

  protected check(request: AuthRequest): Verified {
    const label = this.header;
    const value = requireHeader(request.headers, this.header, "signature", label);
    const body = value.startsWith(this.prefix) ? value.slice(this.prefix.length) : undefined;
    const digest = body === undefined ? undefined : decodeDigest(body, this.encoding, DIGEST_BYTES[this.algorithm]);
    if (digest === undefined) refuse(malformed("signature", label, `is not ${this.prefix}<${this.encoding} ${this.algorithm} digest>`));
    let timestamp = "";
    if (this.timestampHeader !== undefined) {
      timestamp = requireHeader(request.headers, this.timestampHeader, "timestamp", this.timestampHeader);
      checkTimestamp(timestamp, this.toleranceSeconds, this.timestampHeader, this.timestampUnit);
    }
    const message: (string | Buffer)[] = [];
    for (const part of this.#parts) {
      switch (part.kind) {
        case "text": message.push(part.text); break;
        case "body": message.push(request.rawBody); break;
        case "timestamp": message.push(timestamp); break;
        case "method": message.push(request.method); break;
        case "url": message.push(request.url); break;
        case "publicUrl": message.push(request.publicUrl()); break;
        case "header": message.push(requireHeader(request.headers, part.name, "header", part.name)); break;
      }
    }
    return this.expectMatch(label, this.algorithm, [digest], message as SignedMessage);
  }
}

function headerName(owner: string, option: string, value: unknown): string {
  if (typeof value !== "string" || !TOKEN.test(value)) throw new TypeError(`${owner}: ${option} must be a header name, got ${String(value)}`);
  return value.toLowerCase();
}

function parseTemplate(owner: string, template: string): Part[] {
  const parts: Part[] = [];
  let last = 0;
  let bodies = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const index = match.index ?? 0;
    if (index > last) parts.push({ kind: "text", text: template.slice(last, index) });
    last = index + match[0].length;
    const [, name, arg] = match;
    if (name === "header" && arg !== undefined) {
      parts.push({ kind: "header", name: arg.toLowerCase() });
    } else if (arg === undefined && (name === "body" || name === "timestamp" || name === "method" || name === "url" || name === "publicUrl")) {
      if (name === "body") bodies++;
      parts.push({ kind: name });
    } else {
      throw new TypeError(`${owner}: signedPayload has an unknown placeholder ${match[0]}`);
    }
  }
  if (last < template.length) parts.push({ kind: "text", text: template.slice(last) });
  if (bodies !== 1) throw new TypeError(`${owner}: signedPayload must contain {body} exactly once`);
  return parts;
}
