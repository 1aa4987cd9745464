import type { TrustProxy } from "../../http/trust-proxy";
import type { WebhookAuth } from "./auth";
import type { DedupeOptions, DedupePreset } from "./dedupe";
import type { ParserMode, WebhookEvent } from "./webhook-event";
import type { WebhookResponse } from "./webhook-response";

/**
 * What a 2xx promises the sender:
 * - `persisted`: the event is on disk (group-committed) before the answer;
 * - `received`: the event is in memory only; fastest, lost if the process crashes;
 * - `processed`: the answer waits for the task's first attempt; a failure answers 500 so the
 *   sender retries; past `ackTimeoutMs` the event stays queued and 202 is sent.
 */
export type AckMode = "persisted" | "received" | "processed";
export const ACK_MODES: readonly AckMode[] = ["persisted", "received", "processed"];

/** The HTTP methods a source may accept. */
export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * `S` is the sender, inferred from `auth` (its `scheme`: "github" for a GitHubSignature): with
 * a sender whose event types are known, a task's `on` is checked and its event typed.
 */
export interface WebhookSourceOptions<S extends string = string> {
  /** URL path, beginning with "/". A trailing slash is ignored when matching. */
  path: string;
  /** Allowed methods (default ["POST"]). */
  methods?: ReadonlyArray<HttpMethod | Lowercase<HttpMethod>>;
  /** Listen address (default "127.0.0.1"; "0.0.0.0" for all interfaces). */
  host?: string;
  /** Listen port (default 8080; 0 picks a free port, readable as `source.port` after start). */
  port?: number;
  /** BearerAuth or a sender's signature verifier (which also names the events, see `eventName`). */
  auth?: WebhookAuth & { readonly scheme: S };
  /**
   * Names each event (`event.name`, matched by a task's `on`) for senders without a verifier
   * here, e.g. `(event) => event.headers["x-event-type"]`. Overrides the verifier's names.
   * Runs at ingest; a function that throws or returns anything but a non-empty string leaves
   * the event unnamed.
   */
  eventName?: (event: WebhookEvent) => string | undefined;
  /** Body parser mode (default "auto": chosen from Content-Type). */
  parser?: ParserMode;
  /** Fixed answer to accepted requests instead of the default 202. */
  response?: WebhookResponse;
  /** Largest body accepted, in bytes (default 1 MiB); larger ones get 413. */
  maxBodyBytes?: number;
  /** What the 2xx promises (default "persisted"). */
  ack?: AckMode;
  /** How long `processed` acknowledgement and `reply: "result"` wait for the task (default 10 s). */
  ackTimeoutMs?: number;
  /**
   * `"result"`: the task's return value (or a WebhookResponse it returns) is the HTTP answer,
   * within `ackTimeoutMs`; past it the fixed response is sent and the task goes on.
   */
  reply?: "fixed" | "result";
  /** Proxies allowed to name the client (overrides the app's setting). */
  trustProxy?: TrustProxy;
  /** The public URL senders call (for schemes that sign it, such as Twilio). */
  publicUrl?: string;
  /**
   * Drop repeated deliveries at the source: a delivery id from a header or body field is
   * remembered (in the app's store, with a time-to-live); a repeat is answered 200 with
   * `"duplicate": true` and makes no event.
   */
  dedupe?: DedupeOptions | DedupePreset;
}
