import { SECRET_HEADERS } from "./logger";

const LISTED = new Set(SECRET_HEADERS);
/** Beyond the logger's list: any header whose name says it carries a credential or a signature. */
const SECRET_NAME = /signature|secret|token|passw|auth|api[-_]?key|private[-_]?key|cookie|session|hmac|credential|jwt|(?:^|[-_])(?:pass|pwd|otp)(?:$|[-_])/i;
/** A header named "...-key" (x-webhook-key, x-functions-key, ocp-apim-subscription-key) carries one too; an idempotency key does not. */
const KEY_NAME = /(?:^|[-_])key$/i;
const NOT_A_SECRET = /idempotency[-_]key$/i;

/** Header names seen, with the answer: senders repeat the same few names, and this runs for every event kept. */
const known = new Map<string, boolean>();
const MOST_KNOWN = 2_000;

/**
 * Whether a header's value is a credential or a signature, by its name: the logger's list,
 * then any name that says so. The event history and the console hide such values alike, so
 * that a value the console hides cannot be found by a search of the history either.
 */
export function isSecretHeader(name: string): boolean {
  let secret = known.get(name);
  if (secret !== undefined) return secret;
  secret = LISTED.has(name.toLowerCase()) || SECRET_NAME.test(name) || (KEY_NAME.test(name) && !NOT_A_SECRET.test(name));
  if (known.size < MOST_KNOWN) known.set(name, secret);
  return secret;
}

/**
 * Query parameters named like a credential (`?token=`, `?access_token=`, `?api_key=`,
 * `?signature=`, `?sig=`): the history keeps them redacted, as it does such headers.
 */
export function isSecretParameter(name: string): boolean {
  let secret = knownParameters.get(name);
  if (secret !== undefined) return secret;
  // "...-key" as a header is (?subscription-key=, ?x-functions-key=); not "..._key" (?sort_key=), which is data.
  secret = SECRET_NAME.test(name) || SECRET_PARAM.test(name) || (KEY_PARAM.test(name) && !NOT_A_SECRET.test(name));
  if (knownParameters.size < MOST_KNOWN) knownParameters.set(name, secret);
  return secret;
}

const knownParameters = new Map<string, boolean>();

/** Short names senders use for a credential in the query string. */
const SECRET_PARAM = /^(?:sig|key|code|access_token|apikey)$/i;
/** A parameter named "...-key", as the header names KEY_NAME takes. */
const KEY_PARAM = /-key$/i;
