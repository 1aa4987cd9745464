import { SECRET_HEADERS } from "../util/logger";

export const HIDDEN = "[redacted]";

const SECRET = new Set(SECRET_HEADERS);
/** Beyond the logger's list: any header whose name says it carries a credential or a signature. */
const SECRET_NAME = /signature|secret|token|passw|auth|api[-_]?key|cookie|session|hmac|credential/i;
/** A header named "...-key" (x-webhook-key, x-functions-key, ocp-apim-subscription-key) carries one too; an idempotency key does not. */
const KEY_NAME = /(?:^|[-_])key$/i;
const NOT_A_SECRET = /idempotency[-_]key$/i;

function secretHeader(name: string): boolean {
  return SECRET.has(name.toLowerCase()) || SECRET_NAME.test(name) || (KEY_NAME.test(name) && !NOT_A_SECRET.test(name));
}

/**
 * The headers as the console shows them. The history stores them with credential and signature
 * values already redacted; the console redacts again, more widely, so that a value slipping
 * past the first never reaches a page.
 */
export function shownHeaders(headers: unknown): Array<[string, string]> {
  if (typeof headers !== "object" || headers === null) return [];
  return Object.entries(headers as Record<string, unknown>).map(([name, value]) => {
    const text = Array.isArray(value) ? value.join(", ") : String(value);
    return [name, secretHeader(name) ? HIDDEN : text];
  });
}

/** The query parameters as the console shows them: a parameter named like a credential (`?token=`, `?sig=`) is redacted too. */
export function shownQuery(query: unknown): Record<string, unknown> {
  if (typeof query !== "object" || query === null) return {};
  return Object.fromEntries(Object.entries(query as Record<string, unknown>).map(([name, value]) => [name, SECRET_NAME.test(name) || SECRET_PARAM.test(name) ? HIDDEN : value]));
}

/** Short names senders use for a credential in the query string. */
const SECRET_PARAM = /^(?:sig|key|code|access_token|apikey)$/i;
