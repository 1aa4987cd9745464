import { createHash, createHmac, randomUUID } from "node:crypto";
import { didYouMean } from "../util/did-you-mean";

/** The senders `signRequest` signs for, by the name of their verifier preset. */
export const SIGN_PRESETS = ["github", "stripe", "slack", "standard-webhooks", "svix", "shopify", "twilio", "meta", "zoom", "hmac"] as const;
export type SignPreset = (typeof SIGN_PRESETS)[number];

/** How the generic `hmac` preset signs: the same options as its verifier (HmacSignature). */
export interface HmacSignOptions {
  /** Header that carries the signature. */
  header: string;
  algorithm?: "sha1" | "sha256" | "sha512";
  encoding?: "hex" | "base64";
  /** Text before the digest, e.g. "sha256=". */
  prefix?: string;
  /** What is signed: "{body}" (default), or a template with {timestamp}, {method}, {url}, {header:name}. */
  signedPayload?: string;
  /** Header that carries the timestamp, when signedPayload uses {timestamp}. */
  timestampHeader?: string;
  timestampUnit?: "seconds" | "milliseconds";
  secretEncoding?: "utf8" | "base64" | "hex";
}

export interface SignInit {
  /** The shared secret, as the sender's dashboard shows it (Standard Webhooks: "whsec_..."). */
  secret: string;
  /** The exact bytes that will be sent. */
  body: string | Buffer;
  /** Seconds since the epoch (default: now). */
  timestamp?: number;
  /** Standard Webhooks / Svix message id (default: a random one). */
  id?: string;
  /** Twilio and templates with {url}: the full URL the request goes to, with its query. */
  url?: string;
  /** Templates with {method} (default "POST"). */
  method?: string;
  /** Templates with {header:name}: the other headers of the request. */
  headers?: Record<string, string>;
  /** Required by the `hmac` preset. */
  hmac?: HmacSignOptions;
}

/**
 * The headers a sender adds to sign `body`, for the verifier preset of that name: what a
 * WebhookSource with that `auth` accepts. Use it in tests and with `webhook-tasks send`.
 *
 *   const headers = signRequest("github", { secret: "s3cret", body });
 */
export function signRequest(preset: SignPreset, init: SignInit): Record<string, string> {
  if (!(SIGN_PRESETS as readonly string[]).includes(preset)) {
    const guess = didYouMean(String(preset), SIGN_PRESETS);
    throw new TypeError(`signRequest: unknown preset "${String(preset)}"${guess ? ` (did you mean "${guess}"?)` : ""}; presets: ${SIGN_PRESETS.join(", ")}`);
  }
  if (typeof init?.secret !== "string" || init.secret.length === 0) throw new TypeError(`signRequest(${preset}): secret must be a non-empty string`);
  const body = Buffer.isBuffer(init.body) ? init.body : Buffer.from(init.body ?? "", "utf8");
  const timestamp = String(init.timestamp ?? Math.floor(Date.now() / 1000));
  const hmac = (algorithm: string, key: string | Buffer, ...parts: Array<string | Buffer>) => {
    const mac = createHmac(algorithm, key);
    for (const part of parts) mac.update(part);
    return mac.digest();
  };
  switch (preset) {
    case "github":
    case "meta":
      return { "x-hub-signature-256": `sha256=${hmac("sha256", init.secret, body).toString("hex")}` };
    case "stripe":
      return { "stripe-signature": `t=${timestamp},v1=${hmac("sha256", init.secret, timestamp, ".", body).toString("hex")}` };
    case "slack":
      return { "x-slack-request-timestamp": timestamp, "x-slack-signature": `v0=${hmac("sha256", init.secret, `v0:${timestamp}:`, body).toString("hex")}` };
    case "zoom":
      return { "x-zm-request-timestamp": timestamp, "x-zm-signature": `v0=${hmac("sha256", init.secret, `v0:${timestamp}:`, body).toString("hex")}` };
    case "shopify":
      return { "x-shopify-hmac-sha256": hmac("sha256", init.secret, body).toString("base64") };
    case "standard-webhooks":
    case "svix": {
      const key = Buffer.from(init.secret.startsWith("whsec_") ? init.secret.slice(6) : init.secret, "base64");
      const id = init.id ?? `msg_${randomUUID().replace(/-/g, "")}`;
      const signature = `v1,${hmac("sha256", key, `${id}.${timestamp}.`, body).toString("base64")}`;
      const prefix = preset === "svix" ? "svix" : "webhook";
      return { [`${prefix}-id`]: id, [`${prefix}-timestamp`]: timestamp, [`${prefix}-signature`]: signature };
    }
    case "twilio":
      return signTwilio(init, body);
    case "hmac":
      return signHmac(init, body, timestamp);
  }
}

/** Twilio signs the URL followed by the form's parameters, sorted; other bodies by bodySHA256 in the URL. */
function signTwilio(init: SignInit, body: Buffer): Record<string, string> {
  if (typeof init.url !== "string") throw new TypeError("signRequest(twilio): url is required (Twilio signs the full URL it calls)");
  const url = new URL(init.url);
  let params = "";
  if (url.searchParams.has("bodySHA256")) {
    const want = url.searchParams.get("bodySHA256");
    if (want !== createHash("sha256").update(body).digest("hex")) throw new TypeError("signRequest(twilio): the URL's bodySHA256 is not the SHA-256 of the body");
  } else {
    const byName = new Map<string, string[]>();
    for (const [name, value] of new URLSearchParams(body.toString("utf8"))) byName.set(name, [...(byName.get(name) ?? []), value]);
    for (const name of [...byName.keys()].sort()) for (const value of (byName.get(name) ?? []).sort()) params += name + value;
  }
  const signature = createHmac("sha1", init.secret).update(init.url + params).digest("base64");
  const headers: Record<string, string> = { "x-twilio-signature": signature };
  if (!url.searchParams.has("bodySHA256")) headers["content-type"] = "application/x-www-form-urlencoded";
  return headers;
}

function signHmac(init: SignInit, body: Buffer, seconds: string): Record<string, string> {
  const options = init.hmac;
  if (typeof options?.header !== "string") throw new TypeError("signRequest(hmac): hmac.header is required (the options of your HmacSignature)");
  const secretEncoding = options.secretEncoding ?? "utf8";
  const key = Buffer.from(init.secret, secretEncoding);
  const timestamp = options.timestampUnit === "milliseconds" ? String(init.timestamp !== undefined ? init.timestamp * 1000 : Date.now()) : seconds;
  const mac = createHmac(options.algorithm ?? "sha256", key);
  const template = options.signedPayload ?? "{body}";
  let last = 0;
  for (const match of template.matchAll(/\{([A-Za-z]+)(?::([^}]+))?\}/g)) {
    mac.update(template.slice(last, match.index));
    last = (match.index ?? 0) + match[0].length;
    const [, name, arg] = match;
    if (name === "body") mac.update(body);
    else if (name === "timestamp") mac.update(timestamp);
    else if (name === "method") mac.update((init.method ?? "POST").toUpperCase());
    else if (name === "url" || name === "publicUrl") {
      if (init.url === undefined) throw new TypeError(`signRequest(hmac): url is required by {${name}}`);
      mac.update(name === "url" ? new URL(init.url).pathname + new URL(init.url).search : init.url);
    } else if (name === "header" && arg !== undefined) {
      const value = Object.entries(init.headers ?? {}).find(([k]) => k.toLowerCase() === arg.toLowerCase())?.[1];
      if (value === undefined) throw new TypeError(`signRequest(hmac): headers["${arg}"] is required by {header:${arg}}`);
      mac.update(value);
    } else throw new TypeError(`signRequest(hmac): unknown placeholder ${match[0]}`);
  }
  mac.update(template.slice(last));
  const headers: Record<string, string> = { [options.header.toLowerCase()]: (options.prefix ?? "") + mac.digest(options.encoding ?? "hex") };
  if (options.timestampHeader !== undefined) headers[options.timestampHeader.toLowerCase()] = timestamp;
  return headers;
}
