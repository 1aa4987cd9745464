import { isUtf8 } from "node:buffer";
import { TextDecoder } from "node:util";
import type { ParserMode } from "./webhook-event";
import { charsetOf, mediaType } from "./content-type";
import { echoed } from "./echoed-value";
import { parseForm } from "./form-body";
import { jsonNestsDeeperThan, utf8JsonNestsDeeperThan } from "./json-depth";

/** The body does not read as its parser expects: 400 (or 415 for an unknown charset), no event. */
export class BodyParseError extends Error {
  constructor(
    readonly status: 400 | 415,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "BodyParseError";
  }
}

/**
 * Parses raw bytes per mode. An empty body is `null` in every mode but `raw` (an empty Buffer).
 * `auto` picks from Content-Type: JSON types (application/json, *+json) as json, urlencoded
 * forms as form, text/* as text, anything else (or none) as raw. JSON nesting deeper than
 * `maxDepth` is refused (`body_too_deep`); bodies read back from the store pass no limit.
 */
export function parseBody(mode: ParserMode, raw: Buffer, contentType: string | undefined, maxDepth = Infinity): unknown {
  if (contentType !== undefined && contentType !== seenType) see(contentType);
  const effective = mode !== "auto" ? mode : contentType === undefined ? "raw" : seenMode;
  if (effective === "raw") return raw;
  if (raw.length === 0) return null;
  const charset = contentType === undefined ? undefined : seenCharset;
  const text = decode(raw, charset, effective);
  switch (effective) {
    case "json":
      if (nestsTooDeep(raw, text, charset, maxDepth)) throw new BodyParseError(400, "body_too_deep", `the JSON body nests deeper than ${maxDepth} levels`);
      try {
        return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      } catch (error) {
        throw new BodyParseError(400, "invalid_json", `the body is not valid JSON: ${(error as Error).message}`);
      }
    case "form": {
      const form = parseForm(text, isUtf8Name(charset) ? "utf-8" : charset!);
      if (form === "bad_escape") throw new BodyParseError(400, "invalid_form", "the form body has a malformed percent-escape");
      if (form === "escape_not_in_charset") {
        throw new BodyParseError(400, "invalid_form", `the form body has percent-escaped bytes that are not valid ${isUtf8Name(charset) ? "UTF-8" : charset}`);
      }
      return form;
    }
    default:
      return text;
  }
}

/**
 * The last Content-Type parsed and what it says: senders send the same header with every
 * delivery, so it is read once, not per request.
 */
let seenType: string | undefined;
let seenMode: Exclude<ParserMode, "auto"> = "raw";
let seenCharset: string | undefined;

function see(contentType: string): void {
  seenMode = modeFor(contentType);
  seenCharset = charsetOf(contentType);
  seenType = contentType;
}

/**
 * Whether the JSON nests deeper than `maxDepth`. Nesting that deep takes more than `maxDepth`
 * opening brackets, one character each: a shorter body is not scanned.
 */
function nestsTooDeep(raw: Buffer, text: string, charset: string | undefined, maxDepth: number): boolean {
  if (isUtf8Name(charset)) return raw.length > maxDepth && utf8JsonNestsDeeperThan(raw, maxDepth);
  return text.length > maxDepth && jsonNestsDeeperThan(text, maxDepth);
}

export function modeFor(contentType: string | undefined): Exclude<ParserMode, "auto"> {
  if (contentType === undefined) return "raw";
  const type = mediaType(contentType);
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "application/x-www-form-urlencoded") return "form";
  if (type.startsWith("text/")) return "text";
  return "raw";
}

/** A charset parameter that reads as UTF-8 (none means UTF-8, as JSON and Twilio's forms are). */
export function isUtf8Name(charset: string | undefined): boolean {
  return charset === undefined || charset === "utf-8" || charset === "utf8" || charset === "us-ascii";
}

function decode(raw: Buffer, charset: string | undefined, mode: "json" | "form" | "text"): string {
  if (isUtf8Name(charset)) {
    if (!isUtf8(raw)) throw new BodyParseError(400, `invalid_${mode}`, "the body is not valid UTF-8");
    return raw.toString("utf8");
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    throw new BodyParseError(415, "unsupported_charset", `charset ${echoed(charset!)} is not supported`);
  }
  try {
    return decoder.decode(raw);
  } catch {
    throw new BodyParseError(400, `invalid_${mode}`, `the body is not valid ${charset}`);
  }
}
