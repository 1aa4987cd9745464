import { isSecretHeader, isSecretParameter } from "./secret-header";

export const REDACTED = "[redacted]";

/**
 * A payload as the history keeps it and the CLI may print it: the values of credential and
 * signature headers (authorization, cookie, the senders' signatures, any header named like a
 * credential: see isSecretHeader) replaced in the event's `headers`, and those of query
 * parameters named like one (`?token=`, `?api_key=`, `?sig=`: see isSecretParameter) in its
 * `query`. A terminal or a pasted ticket is no place for them, and nothing the CLI does needs
 * them; the stored letter keeps them for a replay.
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
    const redacted =
      key === "headers" && isRecord(inner)
        ? redactNamed(inner, isSecretHeader)
        : key === "query" && isRecord(inner) && isRequest(value)
          ? redactNamed(inner, isSecretParameter)
          : levels > 0
            ? redactAt(inner, levels - 1)
            : inner;
    if (redacted !== inner) (out ??= { ...value })[key] = redacted;
  }
  return out ?? value;
}

/** The values whose names `secret` picks replaced; a repeated query parameter (an array) becomes one placeholder. */
function redactNamed(values: Record<string, unknown>, secret: (name: string) => boolean): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const name in values) {
    if (Object.prototype.hasOwnProperty.call(values, name) && secret(name)) (out ??= { ...values })[name] = REDACTED;
  }
  return out ?? values;
}

/**
 * A request (a webhook event: its headers beside its query): only a request's query string
 * holds credentials; a `query` field of the app's own data (`{ query: { code, key } }`) is kept
 * as it is, or a replay of it would hand the task the placeholder.
 */
function isRequest(value: Record<string, unknown>): boolean {
  return isRecord(value.headers);
}

/** A plain object: a Date, a Buffer or a Map is kept as it is. */
function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
