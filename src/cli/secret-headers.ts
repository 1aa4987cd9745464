import { SECRET_HEADERS } from "../util/logger";

const SECRET = new Set(SECRET_HEADERS);

/**
 * A JSON.stringify replacer for what the CLI prints of a stored event: the values of secret
 * headers (credentials, cookies, signatures) under any `headers` object become "[redacted]",
 * as they are in logs. The store keeps them; a terminal or a pasted output should not.
 */
export function redactSecretHeaders(key: string, value: unknown): unknown {
  if (key !== "headers" || typeof value !== "object" || value === null || Array.isArray(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [name, v] of Object.entries(value)) {
    if (!SECRET.has(name.toLowerCase())) continue;
    out ??= { ...(value as Record<string, unknown>) };
    out[name] = "[redacted]";
  }
  return out ?? value;
}
