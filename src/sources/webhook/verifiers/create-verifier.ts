import { GitHubSignature, type GitHubSignatureOptions } from "./github";
import { HmacSignature, type HmacSignatureOptions } from "./hmac";
import { MetaSignature, type MetaSignatureOptions } from "./meta";
import type { SecretInput } from "./secrets";
import { ShopifySignature, type ShopifySignatureOptions } from "./shopify";
import type { SignatureVerifier } from "./signature-verifier";
import { SlackSignature, type SlackSignatureOptions } from "./slack";
import { StandardWebhooksSignature, type StandardWebhooksSignatureOptions } from "./standard-webhooks";
import { StripeSignature, type StripeSignatureOptions } from "./stripe";
import { TwilioSignature, type TwilioSignatureOptions } from "./twilio";
import { ZoomSignature, type ZoomSignatureOptions } from "./zoom";

type Config<T extends string, O> = { type: T; secret: SecretInput } & O;

/**
 * A verifier as written in YAML: `auth: { type: github, secret: "${GITHUB_SECRET}" }`.
 * `secret` is the constructor's first argument; every other key is the option of that name.
 */
export type VerifierConfig =
  | Config<"github", GitHubSignatureOptions>
  | Config<"stripe", StripeSignatureOptions>
  | Config<"slack", SlackSignatureOptions>
  | Config<"standard-webhooks" | "svix", StandardWebhooksSignatureOptions>
  | Config<"shopify", ShopifySignatureOptions>
  | Config<"twilio", TwilioSignatureOptions>
  | Config<"meta", MetaSignatureOptions>
  | Config<"zoom", ZoomSignatureOptions>
  | Config<"hmac", HmacSignatureOptions>;

export type VerifierType = VerifierConfig["type"];

const FACTORIES: Readonly<Record<VerifierType, (secret: SecretInput, options: never) => SignatureVerifier>> = {
  github: (secret, options: GitHubSignatureOptions) => new GitHubSignature(secret, options),
  stripe: (secret, options: StripeSignatureOptions) => new StripeSignature(secret, options),
  slack: (secret, options: SlackSignatureOptions) => new SlackSignature(secret, options),
  "standard-webhooks": (secret, options: StandardWebhooksSignatureOptions) => new StandardWebhooksSignature(secret, options),
  svix: (secret, options: StandardWebhooksSignatureOptions) => new StandardWebhooksSignature(secret, options),
  shopify: (secret, options: ShopifySignatureOptions) => new ShopifySignature(secret, options),
  twilio: (secret, options: TwilioSignatureOptions) => new TwilioSignature(secret, options),
  meta: (secret, options: MetaSignatureOptions) => new MetaSignature(secret, options),
  zoom: (secret, options: ZoomSignatureOptions) => new ZoomSignature(secret, options),
  hmac: (secret, options: HmacSignatureOptions) => new HmacSignature(secret, options),
};

/** The `type` values a YAML `auth` block may name for a signature verifier. */
export const VERIFIER_TYPES: readonly VerifierType[] = Object.keys(FACTORIES) as VerifierType[];

/**
 * Builds a verifier from its plain-object form (parsed YAML or JSON). Throws a TypeError naming
 * the problem (unknown type, unknown option, bad value); the config loader adds the key path.
 */
export function createVerifier(config: VerifierConfig): SignatureVerifier {
  if (typeof config !== "object" || config === null) throw new TypeError("auth: must be a mapping with a type");
  const { type, secret, ...options } = config as { type: unknown; secret: unknown } & Record<string, unknown>;
  if (typeof type !== "string" || !Object.hasOwn(FACTORIES, type)) {
    throw new TypeError(`auth.type: must be one of ${VERIFIER_TYPES.join(", ")}, got ${String(type)}`);
  }
  return FACTORIES[type as VerifierType](secret as SecretInput, options as never);
}
