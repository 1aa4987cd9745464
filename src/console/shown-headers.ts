import { isSecretHeader, isSecretParameter } from "../util/secret-header";

export const HIDDEN = "[redacted]";

/**
 * The headers as the console shows them. The history stores them with credential and signature
 * values already redacted by the same rule; the console redacts again, so that a value kept
 * before a name joined the rule never reaches a page.
 */
export function shownHeaders(headers: unknown): Array<[string, string]> {
  if (typeof headers !== "object" || headers === null) return [];
  return Object.entries(headers as Record<string, unknown>).map(([name, value]) => {
    const text = Array.isArray(value) ? value.join(", ") : String(value);
    return [name, isSecretHeader(name) ? HIDDEN : text];
  });
}

/** The query parameters as the console shows them: a parameter named like a credential (`?token=`, `?sig=`) is redacted too. */
export function shownQuery(query: unknown): Record<string, unknown> {
  if (typeof query !== "object" || query === null) return {};
  return Object.fromEntries(Object.entries(query as Record<string, unknown>).map(([name, value]) => [name, isSecretParameter(name) ? HIDDEN : value]));
}

