import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQueryString } from "node:querystring";
import { errorMessage, type Logger } from "../../util/logger";
import { RateLimit } from "../../util/rate-limit";
import { OrderingKeyError } from "../../app/ordering-key";
import { clientAddress, requestPublicUrl } from "../../http/forwarded";
import { sendError } from "../../http/http-errors";
import { continueIfExpected, type RouteHandler } from "../../http/route-table";
import type { TrustFunction } from "../../http/trust-proxy";
import { storeFailureDetail, toRefusal } from "../../store/store-errors";
import type { QueuedMessage, StoreRefusal } from "../../store/store";
import type { DeliveryOutcome, Inbox, RoutedEvent } from "../source";
import { FilterError } from "../../app/task-filter";
import type { AuthFailure, AuthRequest, WebhookAuth } from "./auth";
import { BodyParseError, parseBody } from "./parse-body";
import { BodyReadError, readBody, type BodyCallback } from "./read-body";
import type { WebhookEvent } from "./webhook-event";
import { WebhookError } from "./webhook-error";
import { WebhookResponse } from "./webhook-response";
import { Deduplicator, deliveryKey, type Duplicate } from "./dedupe";
import { noteResponseCode } from "../../http/response-code";
import { currentTraceContext } from "../../observe/trace-context";
import { activeTracingContext, runIn, tracingIsNoop } from "../../observe/tracing";
import type { ResolvedWebhookOptions } from "./webhook-source";
import { newEventId } from "../../util/event-id";

const EMPTY = Buffer.alloc(0);

/** The 202's length with a UUID for id (every event id the receiver makes): its headers made once, not per answer. */
const ACCEPTED_UUID_LENGTH = `{"accepted":true,"id":"${"0".repeat(36)}"}`.length;
const ACCEPTED_UUID_HEADERS = Object.freeze({ "content-type": "application/json", "content-length": ACCEPTED_UUID_LENGTH });

/**
 * The per-request pipeline of one WebhookSource: admission, auth, body, parse, event, store,
 * answer. Everything static was validated when the source was built; this path only works.
 */
export class WebhookReceiver implements RouteHandler {
  readonly tasks: readonly string[];
  private readonly stripHeaders: readonly string[];
  private readonly deduplicator: Deduplicator | undefined;
  /** Outcomes awaited here of deduplicated events, by event id: their copies wait for them too. */
  private readonly awaiting = new Map<string, Promise<DeliveryOutcome>>();
  /** One line per 5 s for events the store failed to take: a failed batch fails many requests at once. */
  private readonly storeFailures = new RateLimit();
  /** One line per 10 s for ordering keys that fail: a payload the key function cannot read comes again with every retry, and anyone may send one. */
  private readonly keyFailures = new RateLimit(10_000);

  constructor(
    private readonly options: ResolvedWebhookOptions,
    private readonly inbox: Inbox,
    private readonly trust: TrustFunction | undefined,
    private readonly logger: Logger,
    /** Requests run in a span only with tracing on and an SDK registered: else there is no trace to store. */
    private readonly tracing = false,
  ) {
    this.tasks = inbox.tasks;
    this.stripHeaders = options.auth?.credentialHeaders ?? [];
    const awaitMs = options.reply === "result" || options.ack === "processed" ? options.ackTimeoutMs : undefined;
    this.deduplicator = options.dedupe && new Deduplicator(inbox.state(inbox.dedupeNamespace), options.dedupe.ttlMs, undefined, awaitMs, (inbox.dedupeEarlier ?? []).map((n) => inbox.state(n)));
  }

  /** Never throws: it runs inside the server's "request" event, where a throw would end the process. */
  handle(req: IncomingMessage, res: ServerResponse, path: string, queryStart: number): void {
    try {
      this.receive(req, res, path, queryStart);
    } catch (error) {
      this.bodyFailed(res, error);
    }
  }

  private receive(req: IncomingMessage, res: ServerResponse, path: string, queryStart: number): void {
    const receivedAt = Date.now();
    let refusal: StoreRefusal | undefined;
    try {
      refusal = this.inbox.admit();
    } catch (error) {
      refusal = toRefusal(error); // a broken store answers 503, as when it fails to store
    }
    if (refusal !== undefined) return refuse(res, refusal);
    const auth = this.options.auth;
    if (auth !== undefined) {
      const handshake = auth.handshake;
      if (handshake?.beforeVerify !== undefined) {
        const early = failClosed(() => handshake.beforeVerify!(this.authRequest(req, path, EMPTY)));
        if (early !== undefined) return early instanceof WebhookResponse ? sendHandshake(res, early) : sendAuthFailure(res, early);
        // A method the source takes only for the handshake (Meta's GET) carries no event, even signed.
        if (!this.options.methods.includes(req.method!)) {
          return sendError(res, 405, "method_not_allowed", `${req.method} is not allowed on ${path} except for the sender's handshake`, { allow: this.options.methods.join(", ") });
        }
      }
      if (!auth.needsBody) {
        const failure = safeVerify(auth, this.authRequest(req, path, EMPTY));
        if (failure !== undefined) return sendAuthFailure(res, failure);
      }
    }
    // "100 Continue" only for a client waiting for it: no closure per request otherwise.
    const beforeRead = req.headers.expect === undefined ? undefined : () => continueIfExpected(req, res);
    const onBody: BodyCallback = (error, raw) => {
      if (error !== undefined) return this.bodyFailed(res, error);
      try {
        this.withBody(req, res, path, queryStart, raw, receivedAt);
      } catch (failure) {
        this.bodyFailed(res, failure);
      }
    };
    // The body's "end" event runs outside the request's span: its context is carried over, so
    // that what runs once the body is in (verifiers, filters, the stored trace) still sees it.
    const traced = this.tracing ? activeTracingContext() : undefined;
    readBody(req, this.options.maxBodyBytes, beforeRead, traced === undefined ? onBody : (error, raw) => runIn(traced, () => onBody(error, raw)));
  }

  private withBody(req: IncomingMessage, res: ServerResponse, path: string, queryStart: number, raw: Buffer, receivedAt: number): void {
    const auth = this.options.auth;
    let authRequest: AuthRequest | undefined;
    if (auth?.needsBody) {
      authRequest = this.authRequest(req, path, raw);
      const failure = safeVerify(auth, authRequest);
      if (failure !== undefined) return sendAuthFailure(res, failure);
    }
    let body: unknown;
    try {
      body = parseBody(this.options.parser, raw, req.headers["content-type"], this.options.maxBodyDepth);
    } catch (error) {
      if (error instanceof BodyParseError) return sendError(res, error.status, error.code, error.message);
      throw error;
    }
    const handshake = auth?.handshake;
    if (handshake?.afterVerify !== undefined) {
      const answer = failClosed(() => handshake.afterVerify!(authRequest ?? this.authRequest(req, path, raw), body));
      if (answer !== undefined) return answer instanceof WebhookResponse ? sendHandshake(res, answer) : sendAuthFailure(res, answer);
    }
    const event: WebhookEvent = {
      body,
      headers: this.eventHeaders(req),
      query: queryStart === -1 ? {} : ({ ...parseQueryString(req.url!.slice(queryStart + 1), undefined, undefined, { maxKeys: 0 }) } as Record<string, string | string[]>),
      method: req.method!,
      path,
      client: clientAddress(req, this.trust),
      received_at: receivedAt / 1000,
    };
    if (this.options.eventName !== undefined) event.name = this.options.eventName(event);
    const message: QueuedMessage<WebhookEvent> = { id: newEventId(receivedAt), payload: event, raw, attempts: 0, enqueuedAt: receivedAt, bodyFromRaw: true, traceContext: this.tracing && !tracingIsNoop() ? currentTraceContext() : undefined };
    let routed: RoutedEvent;
    try {
      routed = this.inbox.route(message);
    } catch (error) {
      // A filter or an ordering key that fails: nothing is stored, and the sender sends again.
      if (error instanceof OrderingKeyError) return this.keyFailed(res, message.id, error);
      if (error instanceof FilterError) return sendError(res, 500, error.code, "a task's filter failed on the event; send the webhook again");
      throw error;
    }
    if (routed.copies.length === 0) return this.unrouted(res, message);
    const key = this.deduplicator && deliveryKey(this.options.dedupe!, req.headers, body);
    this.storeAndAnswer(res, routed, key);
  }

  /**
   * No task takes the event: no queue stores it, and the sender hears 2xx (a hook that keeps
   * failing gets disabled). Once answered, the event history (if kept) notes it as unrouted,
   * for a replay once a task takes such events.
   */
  private unrouted(res: ServerResponse, message: QueuedMessage): void {
    noteResponseCode(res, "unrouted");
    const fixed = this.options.response;
    if (fixed !== undefined) sendResponse(res, fixed);
    else {
      // The id finds the event in the history, where it waits for a replay once a task takes it.
      const body = JSON.stringify({ accepted: true, routed: false, id: message.id });
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
      res.end(body);
    }
    this.inbox.unrouted?.(message);
  }

  /** The task's ordering key function failed: nothing is stored, and the sender is told to send again. */
  private keyFailed(res: ServerResponse, id: string, error: OrderingKeyError): void {
    const logged = this.keyFailures.pass();
    if (logged !== undefined) {
      const suppressed = logged.suppressed > 0 ? { suppressed: logged.suppressed } : {};
      this.logger.error({ eventId: id, error: error.message, ...suppressed }, "cannot compute the event's ordering key: answered 500, nothing stored");
    }
    sendError(res, 500, "ordering_key_failed", "the event's ordering key could not be computed; send the webhook again");
  }

  /** Stores the event's copies and answers as the ack and reply modes say (or as a duplicate). */
  private storeAndAnswer(res: ServerResponse, routed: RoutedEvent, dedupeKey: string | undefined): void {
    const message = routed;
    const { ack, reply } = this.options;
    if (ack === "received" && reply === "fixed" && dedupeKey === undefined) {
      // Checked again now that the body is in: others may have filled the queue meanwhile, and
      // this mode answers before the store does. Both engines count the message synchronously
      // inside accept(), so no request can slip in between.
      const late = this.inbox.admit();
      if (late !== undefined) return refuse(res, late);
      this.inbox.accept(routed).catch((error: unknown) => {
        this.logger.error({ eventId: message.id, error: errorMessage(error) }, "event acknowledged as received was not stored");
      });
      return this.accepted(res, message.id);
    }
    // Registered before storing, so that a task finishing at once is still seen.
    const wait = reply === "result" || ack === "processed" ? this.inbox.expect(message.id, this.options.ackTimeoutMs) : undefined;
    const outcome = wait && dedupeKey !== undefined ? this.awaitOutcome(message.id, dedupeKey, wait.promise) : wait?.promise;
    let stored: Promise<Duplicate | undefined>;
    try {
      stored =
        dedupeKey === undefined
          ? this.inbox.accept(routed).then(() => undefined)
          : this.deduplicator!.run(dedupeKey, message.id, () => this.inbox.accept(routed));
    } catch (error) {
      wait?.cancel();
      this.awaiting.delete(message.id);
      throw error;
    }
    stored.then(
      (original) => {
        if (original !== undefined) {
          wait?.cancel();
          this.awaiting.delete(message.id);
          return this.answerDuplicate(res, original);
        }
        if (outcome === undefined) return this.accepted(res, message.id);
        outcome.then((settled) => this.answerOutcome(res, message.id, settled));
      },
      (error: unknown) => {
        wait?.cancel();
        this.awaiting.delete(message.id);
        if (error instanceof OrderingKeyError) return this.keyFailed(res, message.id, error);
        const refusal = toRefusal(error);
        const logged = refusal.code === "store_unavailable" ? this.storeFailures.pass() : undefined;
        if (logged) {
          const suppressed = logged.suppressed > 0 ? { suppressed: logged.suppressed } : {};
          this.logger.error({ eventId: message.id, error: storeFailureDetail(error), ...suppressed }, "cannot store an event: answered 503");
        }
        refuse(res, refusal);
      },
    );
  }

  /**
   * The awaited outcome of a deduplicated event, once its marker says so: a failed run's caller
   * is told to send again and the event is dropped, so the delivery id is forgotten (that retry
   * must not be a "duplicate"); any other outcome makes later copies plain duplicates.
   */
  private awaitOutcome(id: string, key: string, waited: Promise<DeliveryOutcome>): Promise<DeliveryOutcome> {
    const outcome = waited.then(async (settled) => {
      const dropped = !settled.ok && !("timedOut" in settled);
      await (dropped ? this.deduplicator!.forget(key) : this.deduplicator!.settled(key, id)).catch(() => undefined);
      this.awaiting.delete(id);
      return settled;
    });
    this.awaiting.set(id, outcome);
    return outcome;
  }

  /**
   * A copy of a stored delivery. While the original's waited outcome may still drop it, no 2xx:
   * the copy shares the original's answer when that is awaited here, else it is told to retry.
   */
  private answerDuplicate(res: ServerResponse, original: Duplicate): void {
    if (original.pendingUntil === undefined) return duplicate(res, original.id);
    const outcome = this.awaiting.get(original.id);
    if (outcome === undefined) return duplicateInProgress(res, original.pendingUntil);
    outcome.then((settled) => (settled.ok || "timedOut" in settled ? duplicate(res, original.id) : this.answerOutcome(res, original.id, settled)));
  }

  /**
   * Never throws. A result that cannot be the answer (JSON cannot encode it: a BigInt, a
   * function) gets the source's fixed answer: the task ran and succeeded, and an error status
   * would have the sender send the event again and the task run twice.
   */
  private answerOutcome(res: ServerResponse, id: string, outcome: DeliveryOutcome): void {
    try {
      this.answerWith(res, id, outcome);
    } catch (error) {
      this.logger.error({ eventId: id, error: errorMessage(error) }, "the task succeeded but its result cannot be sent as the HTTP answer: the fixed answer went instead");
      if (res.headersSent) res.end();
      else this.accepted(res, id);
    }
  }

  private answerWith(res: ServerResponse, id: string, outcome: DeliveryOutcome): void {
    if (outcome.ok) {
      if (this.options.reply === "result" && outcome.value !== undefined) return sendResponse(res, toResponse(outcome.value));
      return this.accepted(res, id);
    }
    if ("timedOut" in outcome) return this.accepted(res, id);
    const error = outcome.error;
    if (this.options.reply === "result" && error instanceof WebhookError) {
      // Metrics and refusal logs name the task's own code, as they do the framework's.
      noteResponseCode(res, error.code);
      return sendResponse(res, new WebhookResponse({ status_code: error.status, body: error.body }));
    }
    sendError(res, 500, "task_failed", "the task failed; send the webhook again");
  }

  private accepted(res: ServerResponse, id: string): void {
    const fixed = this.options.response;
    if (fixed !== undefined) return sendResponse(res, fixed);
    const body = `{"accepted":true,"id":"${id}"}`;
    res.writeHead(202, body.length === ACCEPTED_UUID_LENGTH ? ACCEPTED_UUID_HEADERS : { "content-type": "application/json", "content-length": body.length });
    res.end(body);
  }

  private bodyFailed(res: ServerResponse, error: unknown): void {
    if (error instanceof BodyReadError) {
      if (error.status === 499) return; // nobody is left to answer
      res.setHeader("connection", "close");
      return sendError(res, error.status, error.code, error.message);
    }
    this.logger.error({ error: errorMessage(error) }, "webhook request failed");
    sendError(res, 500, "internal_error", "internal server error");
  }

  private eventHeaders(req: IncomingMessage): Record<string, string> {
    const headers: Record<string, string> = {};
    const source = req.headers;
    for (const name in source) {
      const value = source[name];
      if (value !== undefined) headers[name] = typeof value === "string" ? value : value.join(", ");
    }
    // Credentials stay out of the event, and so out of the store and the logs.
    for (const name of this.stripHeaders) delete headers[name];
    return headers;
  }

  private authRequest(req: IncomingMessage, path: string, rawBody: Buffer): AuthRequest {
    const publicUrl = this.options.publicUrl;
    const trust = this.trust;
    return {
      method: req.method!,
      path,
      url: req.url!,
      headers: req.headers,
      rawBody,
      publicUrl: () => (publicUrl !== undefined ? publicUrl + req.url!.slice(path.length) : requestPublicUrl(req, trust)),
    };
  }
}

const VERIFICATION_ERROR: AuthFailure = { status: 401, code: "verification_error", message: "the request could not be verified" };

/**
 * Only an explicit `true` passes: a verifier that throws, returns nothing or returns anything
 * else has not said yes, and the request is refused.
 */
function safeVerify(auth: WebhookAuth, request: AuthRequest): AuthFailure | undefined {
  let verdict: unknown;
  try {
    verdict = auth.verify(request);
  } catch {
    return VERIFICATION_ERROR;
  }
  if (verdict === true) return undefined;
  return isAuthFailure(verdict) ? verdict : VERIFICATION_ERROR;
}

function isAuthFailure(value: unknown): value is AuthFailure {
  const failure = value as AuthFailure | null;
  return typeof failure === "object" && failure !== null && (failure.status === 401 || failure.status === 403) && typeof failure.code === "string";
}

/** Runs an authenticator's hook; a throw becomes a 401, never a 500 nor a pass. */
function failClosed<T>(hook: () => T): T | AuthFailure {
  try {
    return hook();
  } catch {
    return VERIFICATION_ERROR;
  }
}

function sendAuthFailure(res: ServerResponse, failure: AuthFailure): void {
  sendError(res, failure.status, failure.code, failure.message, failure.headers);
}

function refuse(res: ServerResponse, refusal: StoreRefusal): void {
  sendError(res, 503, refusal.code, refusal.message, { "retry-after": String(refusal.retryAfterSeconds) });
}

function duplicate(res: ServerResponse, originalId: string): void {
  noteResponseCode(res, "duplicate");
  const body = JSON.stringify({ accepted: true, duplicate: true, id: originalId });
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** The original copy is stored and its outcome awaited elsewhere (another replica, or before a restart). */
function duplicateInProgress(res: ServerResponse, pendingUntil: number): void {
  const seconds = Math.min(30, Math.max(1, Math.ceil((pendingUntil - Date.now()) / 1000)));
  sendError(res, 503, "duplicate_in_progress", "another copy of this delivery is being processed; send it again later", { "retry-after": String(seconds) });
}

/** A sender's verification challenge answered (no event): counted as "handshake". */
function sendHandshake(res: ServerResponse, response: WebhookResponse): void {
  noteResponseCode(res, "handshake");
  sendResponse(res, response);
}

function sendResponse(res: ServerResponse, response: WebhookResponse): void {
  if (response.status_code === 204 || response.status_code === 304) {
    // No body, and for a 204 no Content-Length (RFC 9110 §8.6): a client reading one would wait for it.
    res.writeHead(response.status_code, response.headers);
    res.end();
    return;
  }
  res.writeHead(response.status_code, { ...response.headers, "content-length": response.payload.length });
  res.end(response.payload);
}

/** A task's return value as an HTTP answer: a WebhookResponse as is, anything else as a 200 body. */
function toResponse(value: unknown): WebhookResponse {
  if (value instanceof WebhookResponse) return value;
  if (Buffer.isBuffer(value) || typeof value === "string") return new WebhookResponse({ status_code: 200, body: value });
  return new WebhookResponse({ status_code: 200, body: JSON.parse(JSON.stringify(value)) });
}
