import { isUtf8 } from "node:buffer";
import { parse as parseQueryString } from "node:querystring";
import { TextDecoder } from "node:util";
import type { ParserMode } from "./webhook-event";

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

const BAD_PERCENT = /%(?![0-9A-Fa-f]{2})/;

/**
 * Parses raw bytes per mode. An empty body is `null` in every mode but `raw` (an empty Buffer).
 * `auto` picks from Content-Type: JSON types (application/json, *+json) as json, urlencoded
 * forms as form, text/* as text, anything else (or none) as raw.
 */
export function parseBody(mode: ParserMode, raw: Buffer, contentType: string | undefined): unknown {
  const effective = mode === "auto" ? modeFor(contentType) : mode;
  if (effective === "raw") return raw;
  if (raw.length === 0) return null;
  const text = decode(raw, contentType, effective);
  switch (effective) {
    case "json":
      try {
        return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
      } catch (error) {
        throw new BodyParseError(400, "invalid_json", `the body is not valid JSON: ${(error as Error).message}`);
      }
    case "form":
      if (BAD_PERCENT.test(text)) throw new BodyParseError(400, "invalid_form", "the form body has a malformed percent-escape");
      // No cap on the number of fields (querystring's default keeps the first 1000 and drops the rest silently): maxBodyBytes bounds it.
      return { ...parseQueryString(text, undefined, undefined, { maxKeys: 0 }) } as Record<string, string | string[]>;
    default:
      return text;
  }
}

export function modeFor(contentType: string | undefined): Exclude<ParserMode, "auto"> {
  if (contentType === undefined) return "raw";
  const semi = contentType.indexOf(";");
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
  if (type === "application/json" || type.endsWith("+json")) return "json";
  if (type === "application/x-www-form-urlencoded") return "form";
  if (type.startsWith("text/")) return "text";
  return "raw";
}

function decode(raw: Buffer, contentType: string | undefined, mode: "json" | "form" | "text"): string {
  const charset = contentType === undefined ? undefined : /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
  if (charset === undefined || charset === "utf-8" || charset === "utf8" || charset === "us-ascii") {
    if (!isUtf8(raw)) throw new BodyParseError(400, `invalid_${mode}`, "the body is not valid UTF-8");
    return raw.toString("utf8");
  }
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch {
    throw new BodyParseError(415, "unsupported_charset", `charset "${charset}" is not supported`);
  }
  try {
    return decoder.decode(raw);
  } catch {
    throw new BodyParseError(400, `invalid_${mode}`, `the body is not valid ${charset}`);
  }
}
