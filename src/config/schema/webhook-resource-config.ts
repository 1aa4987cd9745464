import type { JsonValue } from "../../sources/webhook/webhook-response";
import { HTTP_METHODS, type HttpMethod } from "../../sources/webhook/webhook-options";
import { AnyValue, Integer, Mapping, MethodList, OneOf, Optional, Required, Section, Text, TextMapping, TrustProxySetting } from "./rules";

export const PARSERS = ["json", "form", "text", "raw", "auto"] as const;
export const ACKS = ["persisted", "received", "processed"] as const;
export const REPLIES = ["fixed", "result"] as const;
export const DEDUPE_PRESETS = ["github", "standard-webhooks", "svix", "stripe", "shopify", "slack"] as const;

/** `response:` the fixed answer to accepted requests (the seed's WebhookResponse). */
export class ResponseConfig {
  @Optional() @Integer(200, 599) status_code?: number;
  /** A mapping or list is sent as JSON, a string as text. */
  @AnyValue() body?: JsonValue;
  @Optional() @TextMapping() headers?: Record<string, string>;
}

/** `dedupe:` as a mapping (it may also be a preset name). */
export class DedupeConfig {
  @Optional() @OneOf(DEDUPE_PRESETS) preset?: (typeof DEDUPE_PRESETS)[number];
  @Optional() @Text() header?: string;
  @Optional() @Text() bodyField?: string;
  @Optional() @Integer(1) ttlMs?: number;
}

/** `eventName:` where a sender without a verifier here names its events (one of the two). */
export class EventNameConfig {
  @Optional() @Text() header?: string;
  @Optional() @Text() bodyField?: string;
}

/** `resources.<name>` with `type: webhook`: one WebhookSource. */
export class WebhookResourceConfig {
  @Required() @OneOf(["webhook"]) type!: "webhook";
  @Required() @Text(/^\/[^?#\s\u0000-\u001f\u007f]*$/, 'a path beginning with "/" (no query, fragment, spaces or control characters)') path!: string;
  @Optional() @MethodList(HTTP_METHODS) methods?: HttpMethod[];
  @Optional() @Text() host?: string;
  @Optional() @Integer(0, 65535) port?: number;
  /** `{type: bearer, token}` or a signature verifier `{type: github, secret, ...options}`. */
  @Optional() @Mapping() auth?: Record<string, unknown>;
  @Optional() @OneOf(PARSERS) parser?: (typeof PARSERS)[number];
  @Optional() @Section(() => ResponseConfig) response?: ResponseConfig;
  @Optional() @Integer(1) maxBodyBytes?: number;
  @Optional() @Integer(1) maxBodyDepth?: number;
  @Optional() @OneOf(ACKS) ack?: (typeof ACKS)[number];
  @Optional() @Integer(1) ackTimeoutMs?: number;
  @Optional() @OneOf(REPLIES) reply?: (typeof REPLIES)[number];
  @Optional() @TrustProxySetting() trustProxy?: boolean | number | string | string[];
  @Optional() @Text(/^https?:\/\/\S+$/, "an http:// or https:// URL") publicUrl?: string;
  /** A preset name, or a DedupeConfig mapping (checked separately). */
  @AnyValue() dedupe?: string | DedupeConfig;
  /** Names events for a task's `on` when `auth` does not: `{header: x-event-type}` or `{bodyField: type}`. */
  @Optional() @Section(() => EventNameConfig) eventName?: EventNameConfig;
}
