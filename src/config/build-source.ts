import { WebhookSource } from "../sources/webhook/webhook-source";
import type { WebhookSourceOptions } from "../sources/webhook/webhook-options";
import { WebhookResponse } from "../sources/webhook/webhook-response";
import { buildAuth } from "./auth-registry";
import { defined, messageOf } from "./defined";
import type { IssueList } from "./issue-list";
import type { KeySegment } from "./key-path";
import { WebhookResourceConfig } from "./schema/webhook-resource-config";
import { knownKeys } from "./validate-section";
import { eventNameFrom } from "../sources/webhook/event-names/event-name-from";
import type { EventNamer } from "../sources/webhook/event-names/event-namer";

/**
 * One `type: webhook` resource as a WebhookSource (its auth and response built too). What the
 * constructors refuse is recorded under the key it concerns; undefined when it cannot be built.
 */
export function buildSource(resource: WebhookResourceConfig, path: KeySegment[], issues: IssueList): WebhookSource | undefined {
  const auth = resource.auth === undefined ? undefined : buildAuth(resource.auth, [...path, "auth"], issues);
  if (resource.auth !== undefined && auth === undefined) return undefined;
  let response: WebhookResponse | undefined;
  if (resource.response !== undefined) {
    try {
      response = new WebhookResponse(defined({ ...resource.response }));
    } catch (error) {
      issues.add([...path, "response"], messageOf(error).replace(/^WebhookResponse: /, ""));
      return undefined;
    }
  }
  let eventName: EventNamer | undefined;
  if (resource.eventName !== undefined) {
    try {
      eventName = eventNameFrom(defined({ ...resource.eventName }));
    } catch (error) {
      issues.add([...path, "eventName"], messageOf(error).replace(/^eventName: /, ""));
      return undefined;
    }
  }
  const options: WebhookSourceOptions = defined({
    path: resource.path,
    methods: resource.methods,
    host: resource.host,
    port: resource.port,
    auth,
    parser: resource.parser,
    response,
    maxBodyBytes: resource.maxBodyBytes,
    ack: resource.ack,
    ackTimeoutMs: resource.ackTimeoutMs,
    reply: resource.reply,
    trustProxy: resource.trustProxy,
    publicUrl: resource.publicUrl,
    eventName,
    dedupe: resource.dedupe === undefined ? undefined : typeof resource.dedupe === "string" ? resource.dedupe : defined({ ...resource.dedupe }),
  } as WebhookSourceOptions);
  try {
    return new WebhookSource(options);
  } catch (error) {
    const { key, message } = attribute(messageOf(error).replace(/^WebhookSource\([^)]*\): /, ""), knownKeys(WebhookResourceConfig));
    issues.add([...path, ...key], message);
    return undefined;
  }
}

/**
 * "dedupe.ttlMs must be ..." -> key ["dedupe", "ttlMs"], message "must be ..."; messages that
 * do not start with one of `keys` stay whole, on the resource.
 */
export function attribute(text: string, keys: readonly string[]): { key: string[]; message: string } {
  const match = /^([A-Za-z_]+)((?:\.[A-Za-z_]+)*):? (.+)$/s.exec(text);
  if (!match || !keys.includes(match[1])) return { key: [], message: text };
  return { key: [match[1], ...match[2].split(".").filter(Boolean)], message: match[3] };
}
