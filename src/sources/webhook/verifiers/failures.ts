import type { AuthFailure } from "../auth";

/**
 * Stable error codes a verifier answers with. They go into the JSON error body
 * (`{"error": "<code>", "message": "..."}`); the message may change, the code does not.
 */
export const VERIFIER_ERROR_CODES = [
  "signature_missing",
  "signature_malformed",
  "signature_mismatch",
  "timestamp_missing",
  "timestamp_malformed",
  "timestamp_expired",
  "timestamp_in_future",
  "id_missing",
  "id_malformed",
  "header_missing",
  "header_malformed",
  "body_not_signed",
  "verify_token_mismatch",
  "verification_error",
] as const;

export type VerifierErrorCode = (typeof VERIFIER_ERROR_CODES)[number];

const CHALLENGE: Readonly<Record<string, string>> = Object.freeze({
  "www-authenticate": 'Signature realm="webhook"',
});

/**
 * A refusal with status 401 (or 403). Messages name headers, never their values, so
 * neither a secret nor a signature can reach a log through them.
 */
export function failure(code: VerifierErrorCode, message: string, status: 401 | 403 = 401): AuthFailure {
  return Object.freeze(status === 401 ? { status, code, message, headers: CHALLENGE } : { status, code, message });
}

/** What an unexpected exception inside a verifier becomes: a refusal, never a pass. */
export const VERIFICATION_ERROR = failure("verification_error", "the request could not be verified");

const REFUSAL = Symbol.for("webhook-tasks.verifier-refusal");

/**
 * Thrown inside a verifier to refuse a request; caught by `SignatureVerifier.verify`.
 * Not an Error: no stack is captured, so refusing hostile traffic stays cheap.
 */
export class Refusal {
  readonly [REFUSAL] = true;
  constructor(readonly failure: AuthFailure) {}

  /** Branded rather than `instanceof`, so a second copy of this module still recognises it. */
  static is(value: unknown): value is Refusal {
    return typeof value === "object" && value !== null && (value as { [REFUSAL]?: unknown })[REFUSAL] === true;
  }
}

/** Refuses the request being verified. */
export function refuse(failureValue: AuthFailure): never {
  throw new Refusal(failureValue);
}
