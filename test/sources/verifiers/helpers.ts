import { createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { expect } from "chai";
import type { AuthFailure, AuthRequest, WebhookAuth } from "../../../src/sources/webhook/auth";

export interface RequestInit {
  method?: string;
  /** Path and query as received. */
  url?: string;
  headers?: IncomingHttpHeaders;
  body?: Buffer | string;
  /** What `request.publicUrl()` answers. */
  publicUrl?: string | (() => string);
}

/** An AuthRequest built by hand, as the source would build it. */
export function authRequest(init: RequestInit = {}): AuthRequest {
  const url = init.url ?? "/hook";
  const q = url.indexOf("?");
  const publicUrl = init.publicUrl ?? `https://hooks.example.com${url}`;
  return {
    method: init.method ?? "POST",
    url,
    path: q < 0 ? url : url.slice(0, q),
    headers: init.headers ?? {},
    rawBody: typeof init.body === "string" ? Buffer.from(init.body, "utf8") : init.body ?? Buffer.alloc(0),
    publicUrl: typeof publicUrl === "function" ? publicUrl : () => publicUrl,
  };
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Runs `fn` with Date.now() pinned to `seconds` (for published vectors with old timestamps). */
export function atTime<T>(seconds: number, fn: () => T): T {
  const real = Date.now;
  Date.now = () => seconds * 1000;
  try {
    return fn();
  } finally {
    Date.now = real;
  }
}

export function expectAccepted(auth: WebhookAuth, request: AuthRequest): void {
  const result = auth.verify(request);
  expect(result, result === true ? "" : `${result.code}: ${result.message}`).to.equal(true);
}

export function expectRefused(auth: WebhookAuth, request: AuthRequest, code: string, status = 401): AuthFailure {
  let result: true | AuthFailure | undefined;
  expect(() => (result = auth.verify(request))).not.to.throw();
  expect(result, "expected a refusal").to.not.equal(true);
  result = result as AuthFailure;
  expect(result?.code).to.equal(code);
  expect(result?.status).to.equal(status);
  return result as AuthFailure;
}

/** JSON with accents, CJK, an emoji and a combining mark: multi-byte UTF-8 throughout. */
export const NON_ASCII_BODY = JSON.stringify({ text: "héllo wörld — ✓ 日本語 🎉 e\u0301", name: "Zoë" });

/**
 * Reference signers written from the senders' documentation with node:crypto only, for senders
 * without an npm SDK among the devDependencies (Slack, Meta, Zoom, Shopify). Deliberately not
 * sharing code with src/.
 */
export const reference = {
  slack(secret: string, timestamp: string | number, body: string | Buffer): string {
    return "v0=" + createHmac("sha256", secret).update(Buffer.concat([Buffer.from(`v0:${timestamp}:`), Buffer.from(body)])).digest("hex");
  },
  zoom(secret: string, timestamp: string | number, body: string | Buffer): string {
    return "v0=" + createHmac("sha256", secret).update(Buffer.concat([Buffer.from(`v0:${timestamp}:`), Buffer.from(body)])).digest("hex");
  },
  meta(secret: string, body: string | Buffer): string {
    return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
  },
  shopify(secret: string, body: string | Buffer): string {
    return createHmac("sha256", secret).update(body).digest("base64");
  },
};

/** Header values no verifier may accept or throw on. */
export function hostileValues(valid: string): { name: string; value: string | string[] }[] {
  return [
    { name: "repeated (array)", value: [valid, valid] },
    { name: "repeated (joined by Node)", value: `${valid}, ${valid}` },
    { name: "huge", value: valid + "a".repeat(100_000) },
    { name: "non-ASCII (latin1 bytes)", value: valid.slice(0, -2) + "\u00e9\u00ff" },
    { name: "non-ASCII (astral)", value: `${valid}🎉` },
    { name: "control character", value: `${valid}\u0000` },
    { name: "only spaces", value: "   " },
  ];
}
