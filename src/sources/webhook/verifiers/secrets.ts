import { missingCredentialMessage } from "../missing-credential";

/** A secret, or several while one is being rotated: every one is accepted, the first is current. */
export type SecretInput = string | readonly string[];

/** How a secret string turns into key bytes. */
export type SecretEncoding = "utf8" | "base64" | "hex";

/** Upper bound on secrets held at once, which bounds the work per request. */
export const MAX_SECRETS = 16;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2,3})?$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/**
 * Turns the `secret` argument into key bytes, validating it once at construction: a non-empty
 * string or list of them, without surrounding whitespace (a stray newline from an env file is
 * the usual cause of "every signature mismatches"), decoded per `encoding`.
 * `strip` removes a known prefix first (Standard Webhooks' `whsec_`).
 * Messages never quote a secret.
 */
export function normaliseSecrets(owner: string, input: unknown, encoding: SecretEncoding = "utf8", strip?: string): Buffer[] {
  const list: unknown[] = typeof input === "string" ? [input] : Array.isArray(input) ? [...(input as unknown[])] : [];
  if (list.length === 0) throw new TypeError(missingCredentialMessage(owner, "the secret", input));
  if (list.length > MAX_SECRETS) throw new TypeError(`${owner}: at most ${MAX_SECRETS} secrets, got ${list.length}`);
  return list.map((item, index) => {
    const where = list.length === 1 ? "the secret" : `secret #${index + 1}`;
    if (typeof item !== "string" || item.length === 0) throw new TypeError(missingCredentialMessage(owner, where, item));
    if (item.trim() !== item) throw new TypeError(`${owner}: ${where} has leading or trailing whitespace`);
    const text = strip !== undefined && item.startsWith(strip) ? item.slice(strip.length) : item;
    let key: Buffer;
    if (encoding === "base64") {
      if (!BASE64.test(text)) throw new TypeError(`${owner}: ${where} is not valid base64`);
      key = Buffer.from(text, "base64");
    } else if (encoding === "hex") {
      if (!HEX.test(text)) throw new TypeError(`${owner}: ${where} is not valid hex`);
      key = Buffer.from(text, "hex");
    } else {
      key = Buffer.from(text, "utf8");
    }
    if (key.length === 0) throw new TypeError(`${owner}: ${where} decodes to no bytes`);
    return key;
  });
}
