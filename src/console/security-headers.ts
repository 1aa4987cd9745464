import type { ServerResponse } from "node:http";

/**
 * No inline script and no inline style may run: the pages load one script and one stylesheet
 * from the console itself, and the chart is SVG drawn with attributes and classes.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** Headers on every console answer: the policy above, no framing, no sniffing, no caching of pages. */
export function setSecurityHeaders(res: ServerResponse, page = true): void {
  res.setHeader("content-security-policy", CONTENT_SECURITY_POLICY);
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("cross-origin-opener-policy", "same-origin");
  res.setHeader("cross-origin-resource-policy", "same-origin");
  if (page) res.setHeader("cache-control", "no-store");
}
