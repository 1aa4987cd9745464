import { SECRET_HEADERS } from "../util/logger";

export const REDACTED = "[redacted]";

const SECRET = new Set(SECRET_HEADERS);

/**
 * A dead letter's payload as the CLI may print it: the values of credential and signature
 * headers (authorization, cookie, the senders' signatures: the logger's SECRET_HEADERS)
 * replaced, in the event's `headers`. A terminal or a pasted ticket is no place for them, and
 * nothing the CLI does needs them; the stored letter keeps them for a replay.
 */
export function redactSecretHeaders(payload: unknown): unknown {
  if (!isRecord(payload) || !isRecord(payload.headers)) return payload;
  const headers = Object.fromEntries(Object.entries(payload.headers).map(([name, value]) => [name, SECRET.has(name.toLowerCase()) ? REDACTED : value]));
  return { ...payload, headers };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}
