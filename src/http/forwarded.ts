import type { IncomingMessage } from "node:http";
import type { TrustFunction } from "./trust-proxy";

export type ClientAddress = [host: string, port: number];

/**
 * The caller of a request. From a trusted proxy, the original client named in `Forwarded`
 * (RFC 7239, preferred) or `X-Forwarded-For`; the chain is walked from the nearest hop and
 * stops at the first address not trusted, so a client cannot forge its way past a proxy.
 */
export function clientAddress(req: IncomingMessage, trust: TrustFunction | undefined): ClientAddress {
  const socket = req.socket;
  const peer = unmapIPv4(socket.remoteAddress ?? "");
  const peerPort = socket.remotePort ?? 0;
  if (trust === undefined || !trust(peer, 0)) return [peer, peerPort];
  const hops = forwardedHops(req);
  if (hops.length === 0) return [peer, peerPort];
  let hop = 0;
  let current: ClientAddress = [peer, peerPort];
  // hops[0] is the nearest proxy's claim about its own caller, hops[n-1] the farthest.
  while (hop < hops.length) {
    current = hops[hop];
    hop++;
    if (!trust(current[0], hop)) break;
  }
  return current;
}

/** Hops named by the forwarding headers, nearest first. */
function forwardedHops(req: IncomingMessage): ClientAddress[] {
  const forwarded = req.headers.forwarded;
  if (typeof forwarded === "string" && forwarded.length > 0) {
    const hops: ClientAddress[] = [];
    for (const element of forwarded.split(",")) {
      const match = /(?:^|;)\s*for=("?)([^";,]*)\1/i.exec(element.trim());
      if (match) hops.push(parseNode(match[2]));
    }
    return hops.reverse();
  }
  const xff = req.headers["x-forwarded-for"];
  if (typeof xff !== "string" || xff.length === 0) return [];
  return xff
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseNode)
    .reverse();
}

/**
 * "192.0.2.1:4711", "[2001:db8::1]:4711", "2001:db8::1", "unknown" -> [host, port]. Some
 * proxies put a port in X-Forwarded-For too, so both headers go through here.
 */
function parseNode(node: string): ClientAddress {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(node);
  if (bracketed) return [unmapIPv4(bracketed[1]), bracketed[2] ? Number(bracketed[2]) : 0];
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d+))?$/.exec(node);
  if (v4) return [v4[1], v4[2] ? Number(v4[2]) : 0];
  return [unmapIPv4(node), 0];
}

export function unmapIPv4(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}

/**
 * The URL the sender called. Behind a trusted proxy its scheme and host come from
 * Forwarded / X-Forwarded-Proto / X-Forwarded-Host, since TLS ends at the proxy.
 */
export function requestPublicUrl(req: IncomingMessage, trust: TrustFunction | undefined): string {
  let proto = "http";
  let host = typeof req.headers.host === "string" ? req.headers.host : "";
  const peer = unmapIPv4(req.socket.remoteAddress ?? "");
  if (trust !== undefined && trust(peer, 0)) {
    const forwarded = typeof req.headers.forwarded === "string" ? req.headers.forwarded.split(",")[0] : "";
    const fProto = /(?:^|;)\s*proto=("?)([^";,]+)\1/i.exec(forwarded)?.[2];
    const fHost = /(?:^|;)\s*host=("?)([^";,]+)\1/i.exec(forwarded)?.[2];
    const xProto = firstValue(req.headers["x-forwarded-proto"]);
    const xHost = firstValue(req.headers["x-forwarded-host"]);
    proto = (fProto ?? xProto ?? proto).toLowerCase();
    host = fHost ?? xHost ?? host;
  }
  return `${proto}://${host}${req.url ?? "/"}`;
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const first = value?.split(",")[0].trim();
  return first ? first : undefined;
}
