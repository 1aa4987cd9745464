import { isDeepStrictEqual } from "node:util";
import { Packr } from "msgpackr";
import { charsetOf } from "../../../sources/webhook/content-type";
import { modeFor, parseBody } from "../../../sources/webhook/parse-body";
import type { EventNote } from "../../history";
import { PAYLOAD_ENCODING, unpackKeepingProto } from "../../payload-codec";
import { HISTORY_CODEC } from "./history-codec";

/** What is kept of an event's payload, encoded apart from its summary (see SummaryRecord.b). */
export interface BodyRecord {
  /** The payload; a webhook event's `body` left out when `b` says the raw bytes rebuild it. */
  p: unknown;
  r?: Buffer;
  b?: 1;
  t?: string;
}

/**
 * The payload to write: a webhook event's parsed body is left out when parsing its raw bytes
 * the usual way gives it back (the raw bytes are kept anyway), so the body's bytes are written once.
 */
export function bodyRecord(note: EventNote): BodyRecord {
  const record: BodyRecord = { p: note.payload };
  if (note.raw !== undefined) {
    record.r = note.raw;
    const payload = note.payload;
    // The inbox says when the raw bytes give the body back as it arrived: no second parse to check it.
    if (note.origin.kind === "webhook" && isObject(payload) && "body" in payload && (note.bodyFromRaw === true || rebuildsBody(payload, note.raw))) {
      const { body: _body, ...rest } = payload;
      record.p = rest;
      record.b = 1;
    }
  }
  if (note.traceId !== undefined) record.t = note.traceId;
  return record;
}

/**
 * Whether parsing `raw` as a source does by default gives `payload.body` back. A JSON body (the
 * common case) is compared by a walk of its own, several times faster than isDeepStrictEqual.
 */
function rebuildsBody(payload: Record<string, unknown>, raw: Buffer): boolean {
  try {
    const contentType = contentTypeOf(payload);
    const charset = contentType === undefined ? undefined : charsetOf(contentType);
    if (modeFor(contentType) === "json" && (charset === undefined || charset === "utf-8" || charset === "utf8")) {
      const text = raw.toString("utf8");
      return sameJson(JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text), payload.body);
    }
    return isDeepStrictEqual(parseBody("auto", raw, contentType), payload.body);
  } catch {
    return false;
  }
}

/** Equality of two values JSON.parse could have made (plain objects, arrays, strings, numbers, booleans, null). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || Object.getPrototypeOf(b) !== Object.prototype) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.prototype.hasOwnProperty.call(b, key) || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

const bodyPackr = new Packr(PAYLOAD_ENCODING);

/** Encoded as the timeline's records are (see HISTORY_CODEC): no copy to make. */
export function encodeBody(record: BodyRecord): Buffer {
  return HISTORY_CODEC.encode(record);
}

export function decodeBody(bytes: Buffer | Uint8Array): BodyRecord {
  return unpackKeepingProto(bytes, (b) => bodyPackr.unpack(b)) as BodyRecord;
}

/** The payload as the note gave it. */
export function payloadOf(record: BodyRecord): unknown {
  if (record.b !== 1 || record.r === undefined || !isObject(record.p)) return record.p;
  let body: unknown;
  try {
    body = parseBody("auto", record.r, contentTypeOf(record.p));
  } catch {
    body = null; // it parsed when written: only a changed parser could fail here
  }
  return { body, ...record.p };
}

function contentTypeOf(payload: Record<string, unknown>): string | undefined {
  const headers = payload.headers;
  if (!isObject(headers)) return undefined;
  const value = headers["content-type"];
  return typeof value === "string" ? value : undefined;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}
