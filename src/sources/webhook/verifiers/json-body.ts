/** A parsed JSON object body, as handshakes read it. */
export type JsonObject = Record<string, unknown>;

function isPlainObject(value: unknown): value is JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value) || Buffer.isBuffer(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * The body as a JSON object: the parsed body when the source's parser made one, else the raw
 * bytes parsed here (parser `raw` or `text`), but only when they contain `marker`, so ordinary
 * events are not parsed twice. Undefined when it is not a JSON object.
 */
export function jsonObjectOf(body: unknown, rawBody: Buffer, marker: string): JsonObject | undefined {
  if (isPlainObject(body)) return body;
  if (body !== null && body !== undefined && !Buffer.isBuffer(body) && typeof body !== "string") return undefined;
  if (rawBody.length === 0 || !rawBody.includes(marker)) return undefined;
  try {
    const parsed: unknown = JSON.parse(rawBody.toString("utf8"));
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
