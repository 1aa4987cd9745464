/** Sender signature verifiers, usable as a WebhookSource's `auth`, and the handler-level HMAC check. */
export { GitHubSignature, type GitHubSignatureOptions } from "./github";
export { StripeSignature, type StripeSignatureOptions } from "./stripe";
export { SlackSignature, type SlackSignatureOptions } from "./slack";
export { StandardWebhooksSignature, type StandardWebhooksSignatureOptions } from "./standard-webhooks";
export { ShopifySignature, type ShopifySignatureOptions } from "./shopify";
export { TwilioSignature, type TwilioSignatureOptions } from "./twilio";
export { MetaSignature, type MetaSignatureOptions } from "./meta";
export { ZoomSignature, type ZoomSignatureOptions } from "./zoom";
export { HmacSignature, type HmacSignatureOptions } from "./hmac";
export { SignatureVerifier } from "./signature-verifier";
export { createVerifier, VERIFIER_TYPES, type VerifierConfig, type VerifierType } from "./create-verifier";
export { checkHmac, hmacMatches, verifyHmac, SignatureError, type HmacCheck, type HmacCheckFailure } from "./verify-hmac";
export { VERIFIER_ERROR_CODES, type VerifierErrorCode } from "./failures";
export type { SecretInput, SecretEncoding } from "./secrets";
export type { HmacAlgorithm, DigestEncoding } from "./digest";
export type { TimestampUnit } from "./timestamp";
export { DEFAULT_TOLERANCE_SECONDS } from "./timestamp";
