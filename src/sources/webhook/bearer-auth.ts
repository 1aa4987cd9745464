import type { AuthFailure, AuthRequest, WebhookAuth } from "./auth";
import { constantTimeEqual } from "./constant-time";
import { missingCredentialMessage } from "./missing-credential";

const UNAUTHORIZED: AuthFailure = {
  status: 401,
  code: "unauthorized",
  message: "missing or invalid bearer token",
  headers: { "www-authenticate": 'Bearer realm="webhook"' },
};

/** `Authorization: Bearer <token>`, compared in constant time. Several tokens allow rotation. */
export class BearerAuth implements WebhookAuth {
  readonly scheme = "bearer";
  readonly needsBody = false;
  readonly credentialHeaders = ["authorization"] as const;
  readonly #tokens: readonly string[];

  constructor(token: string | readonly string[]) {
    // Checked as `unknown`: from JavaScript, or through `process.env.X!`, anything can arrive.
    const given: unknown = token;
    const tokens: unknown[] = typeof given === "string" ? [given] : Array.isArray(given) ? [...(given as unknown[])] : [];
    if (tokens.length === 0) throw new TypeError(missingCredentialMessage("BearerAuth", "the token", given));
    tokens.forEach((t, i) => {
      if (typeof t !== "string" || t.length === 0) throw new TypeError(missingCredentialMessage("BearerAuth", tokens.length === 1 ? "the token" : `token #${i + 1}`, t));
    });
    this.#tokens = tokens as string[];
  }

  verify(request: AuthRequest): true | AuthFailure {
    const header = request.headers.authorization;
    if (typeof header !== "string" || header.length > 4096) return UNAUTHORIZED;
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!match) return UNAUTHORIZED;
    let ok = false;
    // Every token is compared, so timing does not tell which one matched.
    for (const token of this.#tokens) ok = constantTimeEqual(match[1], token) || ok;
    return ok ? true : UNAUTHORIZED;
  }

  /** Keeps the token out of logs and `util.inspect`. */
  toJSON(): { scheme: string } {
    return { scheme: this.scheme };
  }
}
