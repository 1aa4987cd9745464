import { createHmac, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { constantTimeEqual } from "../sources/webhook/constant-time";
import type { ConsoleAuth } from "./console-options";
import { ConsoleSignOuts } from "./console-sign-outs";

/** Who a request is: how it proved it (and the session's nonce, to which its CSRF token is bound). */
export type Principal =
  | { readonly kind: "open" }
  | { readonly kind: "session"; readonly nonce: string; readonly expires: number }
  | { readonly kind: "bearer" }
  | { readonly kind: "basic"; readonly username: string };

/**
 * The session cookie's name: one per app, as browsers keep cookies per host whatever the
 * port, and two apps' consoles on one host would otherwise sign each other out.
 */
export function sessionCookieName(appName: string): string {
  return `wt_console_${appName}`;
}
/** A session lasts this long from the login, then the token is asked again. */
export const SESSION_MS = 12 * 60 * 60 * 1000;

/**
 * The console's authentication. The session cookie carries its expiry and a random nonce,
 * signed with a key derived from the configured secret, so that sessions survive a restart,
 * hold on every replica sharing the secret, and end when it changes. Signing out is noted
 * where every replica looks (see ConsoleSignOuts), so a copy of the cookie is refused from
 * then on. Every comparison is constant-time.
 */
export class ConsoleAuthenticator {
  readonly mode: "open" | "token" | "basic";
  readonly cookieName: string;
  private readonly key: Buffer;

  constructor(
    private readonly auth: ConsoleAuth | undefined,
    appName: string,
    private readonly signOuts = new ConsoleSignOuts(undefined),
  ) {
    this.cookieName = sessionCookieName(appName);
    this.mode = auth === undefined ? "open" : "token" in auth ? "token" : "basic";
    const secret = auth === undefined ? randomBytes(32) : "token" in auth ? `token:${auth.token}` : `basic:${auth.username}:${auth.password}`;
    this.key = createHmac("sha256", secret).update("webhook-tasks console v1").digest();
  }

  /** The request's principal, or undefined when it proves nothing (401), a signed-out session included. */
  async signedIn(req: IncomingMessage, now = Date.now()): Promise<Principal | undefined> {
    const principal = this.authenticate(req, now);
    return principal?.kind === "session" && (await this.signOuts.ended(principal.nonce, now)) ? undefined : principal;
  }

  /** What the request's credentials prove, sign-outs aside (see signedIn). */
  authenticate(req: IncomingMessage, now = Date.now()): Principal | undefined {
    const auth = this.auth;
    if (auth === undefined) return { kind: "open" };
    const header = req.headers.authorization;
    if ("token" in auth) {
      // Only a Bearer header is a try at the token: a proxy's own basic header leaves the session cookie to speak.
      if (header !== undefined && BEARER.test(header)) {
        const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
        return match !== null && constantTimeEqual(match[1], auth.token) ? { kind: "bearer" } : undefined;
      }
      const cookie = cookieValue(req.headers.cookie, this.cookieName);
      return cookie === undefined ? undefined : this.verifySession(cookie, now);
    }
    const match = header === undefined ? null : /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    if (match === null) return undefined;
    const pair = Buffer.from(match[1], "base64").toString("utf8");
    const colon = pair.indexOf(":");
    if (colon === -1) return undefined;
    // One comparison of the whole pair: neither the name nor the password leaks on its own.
    return constantTimeEqual(pair, `${auth.username}:${auth.password}`) ? { kind: "basic", username: pair.slice(0, colon) } : undefined;
  }

  /** Whether the request tries this console's credentials in its Authorization header (a wrong one is then counted). */
  triesCredentials(req: IncomingMessage): boolean {
    const header = req.headers.authorization;
    return header !== undefined && (this.mode === "token" ? BEARER.test(header) : this.mode === "basic" ? /^Basic\b/i.test(header) : false);
  }

  /** The token typed into the login page. */
  tokenMatches(typed: string): boolean {
    return this.auth !== undefined && "token" in this.auth && constantTimeEqual(typed, this.auth.token);
  }

  /** A new session's cookie value. */
  newSession(now = Date.now()): string {
    const expires = now + SESSION_MS;
    const nonce = randomBytes(18).toString("base64url");
    return `${expires}.${nonce}.${this.sign(`session.${expires}.${nonce}`)}`;
  }

  /** Signing out: the session's cookie, wherever a copy of it is, no longer signs anyone in. */
  async endSession(principal: Principal, now = Date.now()): Promise<void> {
    if (principal.kind === "session") await this.signOuts.end(principal.nonce, principal.expires, now);
  }

  /** The CSRF token of a principal: bound to its session (or to its credentials for basic and bearer). */
  csrfToken(principal: Principal): string {
    switch (principal.kind) {
      case "session":
        return this.sign(`csrf.session.${principal.nonce}`);
      case "basic":
        return this.sign(`csrf.basic.${principal.username}`);
      default:
        return this.sign(`csrf.${principal.kind}`);
    }
  }

  csrfMatches(principal: Principal, value: unknown): boolean {
    return typeof value === "string" && constantTimeEqual(value, this.csrfToken(principal));
  }

  private verifySession(cookie: string, now: number): Principal | undefined {
    const parts = cookie.split(".");
    if (parts.length !== 3) return undefined;
    const [expires, nonce, signature] = parts;
    if (!constantTimeEqual(signature, this.sign(`session.${expires}.${nonce}`))) return undefined;
    const until = Number(expires);
    return Number.isFinite(until) && until > now ? { kind: "session", nonce, expires: until } : undefined;
  }

  private sign(text: string): string {
    return createHmac("sha256", this.key).update(text).digest("base64url");
  }
}

const BEARER = /^Bearer\b/i;

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
