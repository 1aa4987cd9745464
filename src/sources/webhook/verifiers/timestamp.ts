import { failure, refuse } from "./failures";
import { malformed } from "./header-value";

/** Default replay window, as Stripe, Slack and Standard Webhooks recommend: five minutes. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Longest window accepted by configuration: one day. */
export const MAX_TOLERANCE_SECONDS = 86_400;

export type TimestampUnit = "seconds" | "milliseconds";

const DIGITS = /^[0-9]{1,16}$/;

/** Validates a `toleranceSeconds` option at construction (a positive number of seconds, at most one day). */
export function toleranceOption(owner: string, value: unknown): number {
  if (value === undefined) return DEFAULT_TOLERANCE_SECONDS;
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_TOLERANCE_SECONDS) {
    throw new TypeError(`${owner}: toleranceSeconds must be a number of seconds above 0 and at most ${MAX_TOLERANCE_SECONDS}, got ${String(value)}`);
  }
  return value;
}

/**
 * Checks a signed timestamp (decimal digits only) against the clock, both ways: older than
 * the tolerance is `timestamp_expired`, further ahead than it is `timestamp_in_future`.
 * Refuses the request on failure; returns the timestamp in seconds.
 */
export function checkTimestamp(text: string, toleranceSeconds: number, label: string, unit: TimestampUnit = "seconds"): number {
  if (!DIGITS.test(text)) refuse(malformed("timestamp", label, "is not a decimal number"));
  const seconds = unit === "milliseconds" ? Number(text) / 1000 : Number(text);
  const now = Date.now() / 1000;
  if (seconds < now - toleranceSeconds) refuse(failure("timestamp_expired", `${label} is older than the tolerance`));
  if (seconds > now + toleranceSeconds) refuse(failure("timestamp_in_future", `${label} is further in the future than the tolerance`));
  return seconds;
}
