import { isSecretHeader } from "./secret-header";

export const REDACTED = "[redacted]";

/**
 * A dead letter's payload as the CLI may print it: the values of credential and signature
 * headers (authorization, cookie, the senders' signatures, any header named like a
 * credential: see isSecretHeader) replaced, in the event's `headers`. A terminal or a pasted
 * ticket is no place for them, and nothing the CLI does needs them; the stored letter keeps
 * them for a replay.
 */
export function redactSecretHeaders(payload: unknown): unknown {
  return redactAt(payload, 2);
}

/**
 * The `headers` of `value` and, as the logger's REDACT_PATHS reach (`*.headers`,
 * `*.*.headers`), of what it holds `levels` deep: a task that emits `{ event, ... }` hands the
 * event's headers on one level down. Copy on write: what holds no secret header comes back
 * as it is, without a copy (the event history redacts every event it keeps).
 */
function redactAt(value: unknown, levels: number): unknown {
  if (Array.isArray(value)) {
    if (levels === 0) return value;
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = redactAt(value[i], levels - 1);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  if (!isRecord(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const inner = value[key];
    const redacted = key === "headers" && isRecord(inner) ? redactHeaders(inner) : levels > 0 ? redactAt(inner, levels - 1) : inner;
    if (redacted !== inner) (out ??= { ...value })[key] = redacted;
  }
  return out ?? value;
}

function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const name in headers) {
    if (Object.prototype.hasOwnProperty.call(headers, name) && isSecretHeader(name)) (out ??= { ...headers })[name] = REDACTED;
  }
  return out ?? headers;
}

/** A plain object: a Date, a Buffer or a Map is kept as it is. */
function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
