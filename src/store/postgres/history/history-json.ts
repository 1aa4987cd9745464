import { setOwnKey } from "../../../util/own-key";

/*
 * Payloads as PostgreSQL's jsonb takes them. JSON has no bytes, no bigint, and jsonb refuses
 * U+0000 and unpaired surrogates (one such string would fail the whole batch it rides in): bytes
 * become `{ "$bytes": base64 }` (turned back into a Buffer on read), a bigint its decimal text,
 * U+0000 and lone surrogates U+FFFD. The raw request bytes are kept apart, exact.
 */

const BYTES = "$bytes";

/**
 * `value` as JSON, bytes and bigints made JSON. Without a replacer first (several times faster,
 * and what nearly every payload needs); again with it when the text shows a Buffer or a bigint
 * threw.
 */
export function jsonText(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
  }
  if (text === undefined || text.includes('"type":"Buffer","data":[')) text = JSON.stringify(value, replacer);
  return text ?? "null";
}

/** JSON text with what jsonb refuses (U+0000, unpaired surrogates) made U+FFFD. */
export function storableJsonText(text: string): string {
  // JSON.stringify writes \u only for control characters and lone surrogates: most texts have none.
  if (!text.includes("\\u")) return text;
  return text.includes("\\u0000") || /\\ud[89a-f]/i.test(text) ? text.replace(ESCAPES, fixEscape) : text;
}

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // `value` went through toJSON already (a Buffer's is { type, data }): look at the original.
  const original = this[key];
  if (original instanceof Uint8Array) return { [BYTES]: Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString("base64") };
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** An escaped backslash (kept, so that what follows it is not read as an escape), a NUL, a pair, or a lone surrogate. */
const ESCAPES = /\\(?:\\|u0000|ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}|ud[89a-f][0-9a-f]{2})/gi;

function fixEscape(escape: string): string {
  if (escape === "\\\\" || escape.length === 12) return escape;
  return "\\ufffd";
}

/** A payload read back: `{ "$bytes": base64 }` objects become Buffers again; a `__proto__` key stays an own key. */
export function revivedJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revivedJson);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 1 && keys[0] === BYTES && typeof record[BYTES] === "string") return Buffer.from(record[BYTES], "base64");
  const out: Record<string, unknown> = {};
  for (const key of keys) setOwnKey(out, key, revivedJson(record[key]));
  return out;
}
