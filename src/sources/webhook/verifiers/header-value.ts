import type { IncomingHttpHeaders } from "node:http";
import type { AuthFailure } from "../auth";
import { failure, refuse, type VerifierErrorCode } from "./failures";

/** Longest credential header value read; anything longer is refused unread. */
export const MAX_HEADER_CHARS = 4096;

/** Printable ASCII only: Node hands header bytes over as latin1, so anything else is hostile. */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** What a header holds, which names the error code: `<role>_missing`, `<role>_malformed`. */
export type HeaderRole = "signature" | "timestamp" | "id" | "header";

const MISSING = {
  signature: "signature_missing",
  timestamp: "timestamp_missing",
  id: "id_missing",
  header: "header_missing",
} as const satisfies Record<HeaderRole, VerifierErrorCode>;
const MALFORMED = {
  signature: "signature_malformed",
  timestamp: "timestamp_malformed",
  id: "id_malformed",
  header: "header_malformed",
} as const satisfies Record<HeaderRole, VerifierErrorCode>;

/** One header value, or undefined when absent; never throws, whatever the value holds. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | string[] | undefined {
  const value: unknown = headers[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(String);
  return String(value);
}

/**
 * Reads a credential header or refuses the request: missing or empty is `<role>_missing`;
 * repeated (an array), longer than {@link MAX_HEADER_CHARS}, or holding anything but
 * printable ASCII is `<role>_malformed`. `label` is the header's display name for messages.
 */
export function requireHeader(headers: IncomingHttpHeaders, name: string, role: HeaderRole, label: string): string {
  const value = headerValue(headers, name);
  if (value === undefined || value === "") refuse(failure(MISSING[role], `${label} header is missing`));
  if (typeof value !== "string") refuse(failure(MALFORMED[role], `${label} header is repeated`));
  if (value.length > MAX_HEADER_CHARS) refuse(failure(MALFORMED[role], `${label} header is too long`));
  if (!PRINTABLE_ASCII.test(value)) refuse(failure(MALFORMED[role], `${label} header holds characters other than printable ASCII`));
  return value;
}

/** A ready-made malformed refusal for `label`. */
export function malformed(role: HeaderRole, label: string, what = "is malformed"): AuthFailure {
  return failure(MALFORMED[role], `${label} header ${what}`);
}
