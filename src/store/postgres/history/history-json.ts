import { setOwnKey } from "../../../util/own-key";

/*
 * Payloads as PostgreSQL's jsonb takes them. JSON has no bytes, no bigint, and jsonb refuses
 * U+0000 and unpaired surrogates (one such string would fail the whole batch it rides in): bytes
 * become `{ "$bytes": base64 }` (turned back into a Buffer on read), a bigint its decimal text,
 * U+0000 and lone surrogates U+FFFD; an object that reads like one of those (its one key `$bytes`)
 * is wrapped. The raw request bytes are kept apart, exact.
 */

const BYTES = "$bytes";
/**
 * Wraps an object of the payload whose one key is `$bytes` or `$object` (a body may hold
 * `{ "$bytes": "aGk=" }`): read back as that object, not as bytes. The wrapper is written around
 * what it wraps, never around itself.
 */
const OBJECT = "$object";
const wrappers = new WeakSet<object>();

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
  if (text === undefined || text.includes('"type":"Buffer","data":[') || text.includes(`"${BYTES}":`) || text.includes(`"${OBJECT}":`)) text = JSON.stringify(value, replacer);
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
  if (!wrappers.has(this) && lookAlike(value)) {
    const wrapper = { [OBJECT]: value };
    wrappers.add(wrapper);
    return wrapper;
  }
  return value;
}

/** An object a reader would take for bytes or for a wrapper: its one key is `$bytes` or `$object`. */
function lookAlike(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof Uint8Array) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === BYTES || keys[0] === OBJECT);
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
  // The object a wrapper holds is that object, its one key taken as it is.
  const inner = keys.length === 1 && keys[0] === OBJECT ? record[OBJECT] : undefined;
  const source = typeof inner === "object" && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : record;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) setOwnKey(out, key, revivedJson(source[key]));
  return out;
}
