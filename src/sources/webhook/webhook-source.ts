import type { Listener } from "../../http/listener";
import { compileTrust, type TrustFunction } from "../../http/trust-proxy";
import { normalizePath } from "../../http/route-table";
import type { Inbox, Source, SourceRuntime } from "../source";
import type { WebhookAuth } from "./auth";
import { PARSER_MODES, type ParserMode, type WebhookEvent } from "./webhook-event";
import { parseBody } from "./parse-body";
import { ACK_MODES, HTTP_METHODS, type AckMode, type WebhookSourceOptions } from "./webhook-options";
import { didYouMean } from "../../util/did-you-mean";
import { WebhookResponse } from "./webhook-response";
import { resolveDedupe, type DedupeRule } from "./dedupe";
import { WebhookReceiver } from "./webhook-receiver";
import { ObservedRoute } from "../../observe/observed-route";
import type { EventNamer } from "./event-names/event-namer";

const METHOD = /^[A-Z]+$/;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_BODY_DEPTH = 128;

/** Settings after validation: what the receiver reads on every request, fixed at construction. */
export interface ResolvedWebhookOptions {
  readonly path: string;
  readonly methods: readonly string[];
  readonly host: string;
  readonly port: number;
  readonly auth: WebhookAuth | undefined;
  readonly parser: ParserMode;
  readonly response: WebhookResponse | undefined;
  readonly maxBodyBytes: number;
  readonly maxBodyDepth: number;
  readonly ack: AckMode;
  readonly ackTimeoutMs: number;
  readonly reply: "fixed" | "result";
  readonly publicUrl: string | undefined;
  readonly dedupe: DedupeRule | undefined;
  /** Names events at ingest (the `eventName` option, else the verifier's); never throws. */
  readonly eventName: EventNamer | undefined;
}

/**
 * An HTTP endpoint that turns each matching request into one event for its task. Sources on
 * the same host:port share one server and are told apart by path.
 */
export class WebhookSource<S extends string = string> implements Source {
  readonly kind = "webhook";
  /** Type only: the sender (the `auth` scheme), which types `on` and events (nothing at run time). */
  declare readonly sender?: S;
  readonly options: ResolvedWebhookOptions;
  private readonly trustOverride: TrustFunction | undefined;
  private listener: Listener | undefined;
  private receiver: WebhookReceiver | undefined;

  constructor(options: WebhookSourceOptions<S>) {
    this.options = resolveOptions(options);
    this.trustOverride = options.trustProxy === undefined ? undefined : compileTrust(options.trustProxy);
  }

  /** Whether events get a name (`event.name`): from the verifier, or the `eventName` option. */
  get namesEvents(): boolean {
    return this.options.eventName !== undefined;
  }

  get path(): string {
    return this.options.path;
  }

  /** The bound port after the app started (useful with `port: 0`); the configured one before. */
  get port(): number {
    return this.listener?.port ?? this.options.port;
  }

  /** Full URL of the endpoint, e.g. "http://127.0.0.1:8080/hooks/github". */
  get url(): string {
    const host = this.options.host.includes(":") ? `[${this.options.host}]` : this.options.host;
    return `http://${host}:${this.port}${this.options.path}`;
  }

  /** "/hooks/github" names an unnamed task "hooks/github" ("/" names it "root"). */
  get defaultTaskName(): string {
    const name = this.options.path.replace(/^\/+/, "").replace(/[^A-Za-z0-9_.:\-/]/g, "_").slice(0, 200);
    return name === "" ? "root" : name;
  }

  /** The source's label in logs and metrics: its path without the leading "/" ("root" for "/"). */
  get sourceName(): string {
    return this.defaultTaskName;
  }

  describe(): string {
    return `WebhookSource ${this.options.methods.join("|")} ${this.options.host}:${this.options.port}${this.options.path}`;
  }

  attach(inbox: Inbox, runtime: SourceRuntime): void {
    if (this.receiver) throw new Error(`${this.describe()} is attached already (tasks ${quoted(this.receiver.tasks)}); a source belongs to one app`);
    const { reply, ack } = this.options;
    if (inbox.tasks.length > 1 && (reply === "result" || ack === "processed")) {
      // Several copies, several outcomes: no one of them is the answer, and waiting for all would couple the tasks.
      const mode = reply === "result" ? `reply "result" answers with the task's result` : `ack "processed" answers with the task's first attempt`;
      throw new Error(`${this.describe()}: ${mode}, and ${inbox.tasks.length} tasks take its events (${quoted(inbox.tasks)}); give this source one task, or use reply "fixed" and ack "persisted"`);
    }
    const trust = this.trustOverride ?? (runtime.trustProxy === undefined ? undefined : compileTrust(runtime.trustProxy));
    const listener = runtime.listeners.get(this.options.host, this.options.port);
    const receiver = new WebhookReceiver(this.options, inbox, trust, runtime.logger, runtime.tracing === true);
    const methods = [...new Set([...this.options.methods, ...(this.options.auth?.handshake?.methods ?? [])])];
    const handler =
      runtime.observer?.onRequest === undefined && runtime.tracing !== true
        ? receiver
        : new ObservedRoute(receiver, { source: inbox.name, route: this.options.path, origin: () => listener.origin, trust }, runtime.observer, runtime.tracing === true);
    listener.routes.add(this.options.path, methods, handler, this.routeOwner(inbox.tasks));
    this.listener = listener;
    this.receiver = receiver;
  }

  /** The event's body, parsed again from its raw bytes by this source's parser. */
  revive(payload: unknown, raw: Buffer): WebhookEvent {
    const event = payload as Omit<WebhookEvent, "body">;
    return { body: parseBody(this.options.parser, raw, event.headers?.["content-type"]), ...event };
  }

  /** Who owns the route, for conflict errors: the source and its tasks. */
  private routeOwner(tasks: readonly string[]): string {
    return `${this.describe()} (${tasks.length === 1 ? "task" : "tasks"} ${quoted(tasks)})`;
  }

  detach(): void {
    if (this.listener && this.receiver) {
      this.listener.routes.remove(this.options.path, this.routeOwner(this.receiver.tasks));
    }
    this.receiver = undefined;
    this.listener = undefined;
  }
}

function quoted(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(", ");
}

function resolveOptions(options: WebhookSourceOptions<string>): ResolvedWebhookOptions {
  const where = `WebhookSource(${JSON.stringify(options?.path)})`;
  if (typeof options !== "object" || options === null) throw new TypeError("WebhookSource: options are required");
  const { path } = options;
  if (typeof path !== "string" || !path.startsWith("/") || /[?#\s]/.test(path)) {
    throw new TypeError(`${where}: path must be a string beginning with "/", without query, fragment or spaces`);
  }
  if (!/^[\x21-\x7e]*$/.test(path)) {
    // Requests carry their path percent-encoded: one written otherwise (a control character, U+0000 from a YAML escape, "é") would never match.
    throw new TypeError(`${where}: path must be printable ASCII; percent-encode other characters, as senders do (${JSON.stringify(encodeURI(path))})`);
  }
  const methods = (options.methods ?? ["POST"]).map((m) => (typeof m === "string" ? m.toUpperCase() : m));
  if (!Array.isArray(methods) || methods.length === 0 || methods.some((m) => typeof m !== "string" || !METHOD.test(m))) {
    throw new TypeError(`${where}: methods must be a non-empty list of HTTP method names`);
  }
  for (const method of methods) {
    if ((HTTP_METHODS as readonly string[]).includes(method)) continue;
    const guess = didYouMean(method, HTTP_METHODS);
    throw new TypeError(`${where}: "${method}" is not an HTTP method${guess ? ` (did you mean "${guess}"?)` : ""}; use ${HTTP_METHODS.join(", ")}`);
  }
  const port = options.port ?? 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`${where}: port must be an integer from 0 to 65535`);
  const host = options.host ?? "127.0.0.1";
  if (typeof host !== "string" || host.length === 0) throw new TypeError(`${where}: host must be a non-empty string`);
  const parser = options.parser ?? "auto";
  if (!PARSER_MODES.includes(parser)) throw new TypeError(`${where}: parser must be one of ${PARSER_MODES.join(", ")}`);
  const ack = options.ack ?? "persisted";
  if (!ACK_MODES.includes(ack)) throw new TypeError(`${where}: ack must be one of ${ACK_MODES.join(", ")}`);
  const reply = options.reply ?? "fixed";
  if (reply !== "fixed" && reply !== "result") throw new TypeError(`${where}: reply must be "fixed" or "result"`);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1) throw new TypeError(`${where}: maxBodyBytes must be a positive integer`);
  const maxBodyDepth = options.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH;
  if (!Number.isInteger(maxBodyDepth) || maxBodyDepth < 1) throw new TypeError(`${where}: maxBodyDepth must be a positive integer`);
  const ackTimeoutMs = options.ackTimeoutMs ?? 10_000;
  if (!(ackTimeoutMs > 0)) throw new TypeError(`${where}: ackTimeoutMs must be a positive number`);
  if (options.auth !== undefined && (typeof options.auth !== "object" || typeof options.auth.verify !== "function")) {
    throw new TypeError(`${where}: auth must be BearerAuth or a signature verifier`);
  }
  if (options.response !== undefined && !(options.response instanceof WebhookResponse)) {
    throw new TypeError(`${where}: response must be a WebhookResponse: new WebhookResponse({ status_code, body, headers })`);
  }
  if (options.eventName !== undefined && typeof options.eventName !== "function") {
    throw new TypeError(`${where}: eventName must be a function (event) => string | undefined`);
  }
  return {
    path: normalizePath(path),
    methods: [...new Set(methods)],
    host,
    port,
    auth: options.auth,
    parser,
    response: options.response,
    maxBodyBytes,
    maxBodyDepth,
    ack,
    ackTimeoutMs,
    reply,
    publicUrl: options.publicUrl,
    dedupe: options.dedupe === undefined ? undefined : resolveDedupe(options.dedupe, where),
    eventName: safeNamer(options.eventName ?? options.auth?.eventName?.bind(options.auth)),
  };
}

/**
 * The namer as the receiver calls it: a name is a non-empty string or nothing, and a namer
 * that throws leaves the event unnamed rather than failing a delivery the sender signed.
 */
function safeNamer(namer: EventNamer | undefined): EventNamer | undefined {
  if (namer === undefined) return undefined;
  return (event) => {
    try {
      const name = namer(event);
      return typeof name === "string" && name.length > 0 ? name : undefined;
    } catch {
      return undefined;
    }
  };
}
