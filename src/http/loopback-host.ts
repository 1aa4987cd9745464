import { isIP } from "node:net";

/**
 * Whether a listener on `host` can be reached only from this machine: a console may then go
 * without `auth`, and a webhook source without it draws no warning.
 */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  // Host names compare without regard to case (RFC 4343): LOCALHOST is localhost.
  if (bare.toLowerCase() === "localhost") return true;
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1" || /^::ffff:127\./i.test(bare);
  return false;
}
