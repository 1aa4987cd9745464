import type { IncomingMessage } from "node:http";

/**
 * Why a state-changing request may come from another site, or undefined when it comes from the
 * console's own pages. Browsers tell it in Sec-Fetch-Site (Chromium, Firefox, Safari) and in
 * Origin on every POST; a request with neither is refused, as is an Origin whose host is not
 * the one the request was sent to.
 */
export function crossSiteReason(req: IncomingMessage): string | undefined {
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin") return `Sec-Fetch-Site is "${site}", not "same-origin"`;
  const origin = req.headers.origin;
  if (origin === undefined) return site === undefined ? "the request has neither an Origin nor a Sec-Fetch-Site header" : undefined;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return `Origin "${origin}" is not an origin`;
  }
  if (host === "" || host !== req.headers.host) return `Origin "${origin}" is not this console's (${req.headers.host ?? "no Host header"})`;
  return undefined;
}

/** Whether the page the request came from is served over https (its Origin says so): the session cookie is then Secure. */
export function cameOverHttps(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (typeof origin === "string" && origin.startsWith("https:")) return true;
  const proto = req.headers["x-forwarded-proto"];
  return typeof proto === "string" && proto.split(",")[0].trim().toLowerCase() === "https";
}
