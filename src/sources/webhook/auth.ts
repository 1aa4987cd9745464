import type { IncomingHttpHeaders } from "node:http";
import type { WebhookEvent } from "./webhook-event";
import type { WebhookResponse } from "./webhook-response";

/** What an authenticator sees of a request. */
export interface AuthRequest {
  /** Upper case. */
  readonly method: string;
  /** Path without the query string, as received. */
  readonly path: string;
  /** Path and query string, exactly as received. */
  readonly url: string;
  /** Node's request headers (names in lower case; some values may be arrays). */
  readonly headers: IncomingHttpHeaders;
  /** Exact body bytes; empty when the authenticator said it does not need the body. */
  readonly rawBody: Buffer;
  /**
   * The URL the sender called, as configured on the source (`publicUrl`) or rebuilt from
   * trusted proxy headers; senders such as Twilio sign it.
   */
  publicUrl(): string;
}

/** Why a request was refused. `code` is stable and goes into the JSON error body. */
export interface AuthFailure {
  readonly status: 401 | 403;
  readonly code: string;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * A source's `auth`: bearer tokens, or a sender's signature scheme. Implementations must
 * fail closed (anything unexpected is a failure, never an exception that passes) and must
 * not log secrets or signatures.
 */
export interface WebhookAuth {
  /** Short name for logs and errors ("bearer", "github", ...). */
  readonly scheme: string;
  /** False when `verify` looks only at headers; it then runs before the body is read. */
  readonly needsBody: boolean;
  /** Header names (lower case) holding credentials; removed from the event once verified. */
  readonly credentialHeaders?: readonly string[];
  /**
   * `true` lets the request through; anything else refuses it. A pass must be said
   * explicitly, so an implementation that forgets to return fails closed.
   */
  verify(request: AuthRequest): true | AuthFailure;
  /**
   * The sender's name for a verified event ("pull_request.opened"), for tasks that select
   * events with `on`; undefined when the delivery carries none. Senders' verifiers have one.
   */
  eventName?(event: WebhookEvent): string | undefined;
  /**
   * Handshakes a sender makes before it sends events, answered by the source without an
   * event. `beforeVerify` sees unsigned requests (Meta's GET challenge); `afterVerify` sees
   * verified, parsed ones (Slack url_verification, Zoom endpoint.url_validation).
   */
  readonly handshake?: {
    /** Methods accepted for the handshake even when the source does not list them. */
    readonly methods?: readonly string[];
    beforeVerify?(request: AuthRequest): WebhookResponse | undefined;
    afterVerify?(request: AuthRequest, body: unknown): WebhookResponse | undefined;
  };
}
