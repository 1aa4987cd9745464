import { SECRET_HEADERS } from "./logger";

export const REDACTED = "[redacted]";

const SECRET = new Set(SECRET_HEADERS);

/**
 * A dead letter's payload as the CLI may print it: the values of credential and signature
 * headers (authorization, cookie, the senders' signatures: the logger's SECRET_HEADERS)
 * replaced, in the event's `headers`. A terminal or a pasted ticket is no place for them, and
 * nothing the CLI does needs them; the stored letter keeps them for a replay.
 */
export function redactSecretHeaders(payload: unknown): unknown {
  return redactAt(payload, 2);
}

/**
 * The `headers` of `value` and, as the logger's REDACT_PATHS reach (`*.headers`,
 * `*.*.headers`), of what it holds `levels` deep: a task that emits `{ event, ... }` hands the
 * event's headers on one level down.
 */
function redactAt(value: unknown, levels: number): unknown {
  if (Array.isArray(value)) return levels > 0 ? value.map((item) => redactAt(item, levels - 1)) : value;
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === "headers" && isRecord(inner)) {
      out[key] = Object.fromEntries(Object.entries(inner).map(([name, v]) => [name, SECRET.has(name.toLowerCase()) ? REDACTED : v]));
    } else out[key] = levels > 0 ? redactAt(inner, levels - 1) : inner;
  }
  return out;
}

/** A plain object: a Date, a Buffer or a Map is kept as it is. */
function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
