import type { IncomingMessage } from "node:http";
import { context, propagation, ProxyTracerProvider, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer, type TracerProvider } from "@opentelemetry/api";
import type { QueuedMessage } from "../store/store";
import { contextOfCarrier, parseTraceparent } from "./trace-context";

/**
 * Spans through @opentelemetry/api only: without a registered SDK the tracer is a no-op and
 * nothing here records anything. A server span per webhook request, a consumer span per task
 * run; the queue between them carries the W3C context (see trace-context.ts).
 */
const TRACER_NAME = "webhook-tasks";

const SERVER = { kind: SpanKind.SERVER };
const CONSUMER = { kind: SpanKind.CONSUMER };

let cached: { provider: TracerProvider; tracer: Tracer } | undefined;

/** The tracer, made once per global provider (getTracer allocates a tracer per call). */
function tracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return cached.tracer;
}

/** The API's trace singleton, taken once: the compiled import reads it through a getter each time. */
const TRACE = trace;

/** The API's own no-op provider: what an unset ProxyTracerProvider delegates to. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * True while no SDK is registered: the global provider is the API's proxy and its delegate is
 * the no-op one. Asked per request and per run (two property reads), so that an SDK registered
 * after the app started is honoured from its next request on.
 */
export function tracingIsNoop(): boolean {
  const provider = TRACE.getTracerProvider();
  return provider instanceof ProxyTracerProvider && provider.getDelegate() === NOOP_PROVIDER;
}

/** A started span and the context to run its work in (undefined when the span records nothing). */
export interface StartedSpan {
  readonly span: Span;
  readonly context: Context | undefined;
}

/**
 * The server span of one webhook request; the parent is the request's trace headers.
 * Undefined without an SDK: the no-op tracer's span would record nothing and, since a span
 * that does not record is never made active, would not carry the trace anywhere either.
 */
export function startRequestSpan(req: IncomingMessage, route: string): StartedSpan | undefined {
  if (tracingIsNoop()) return undefined;
  const method = req.method ?? "";
  let parent = propagation.extract(ROOT_CONTEXT, req.headers);
  if (trace.getSpanContext(parent) === undefined && req.headers.traceparent !== undefined) {
    // No propagator registered: the W3C header is honoured all the same.
    const remote = parseTraceparent(req.headers.traceparent);
    if (remote !== undefined) parent = trace.setSpanContext(parent, remote);
  }
  const span = tracer().startSpan(`${method} ${route}`, SERVER, parent);
  // Attributes only for a span that records: without an SDK the request pays for nothing more.
  if (span.isRecording()) span.setAttributes({ "http.request.method": method, "http.route": route });
  return { span, context: span.isRecording() ? trace.setSpan(parent, span) : undefined };
}

export function endRequestSpan(span: Span, status: number, code: string): void {
  if (!span.isRecording()) return span.end();
  span.setAttribute("http.response.status_code", status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  if (status >= 400) span.setAttribute("error.type", code);
  span.end();
}

/**
 * The consumer span of one task run, child of the span that queued the message. Undefined
 * without an SDK for a message that carries no trace: nothing to record, nothing to pass on.
 * (With a stored trace the no-op span still hands it to what the run emits.)
 */
export function startTaskSpan(task: string, queue: string, message: QueuedMessage, attempt: number): StartedSpan | undefined {
  if (message.traceContext === undefined && tracingIsNoop()) return undefined;
  const parent = contextOfCarrier(message.traceContext);
  const span = tracer().startSpan(`process ${queue}`, CONSUMER, parent);
  if (span.isRecording()) {
    span.setAttributes({
      "messaging.system": "webhook-tasks",
      "messaging.destination.name": queue,
      "messaging.message.id": message.id,
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "webhook_tasks.task": task,
      "webhook_tasks.attempt": attempt,
    });
  }
  return { span, context: span.isRecording() ? trace.setSpan(parent, span) : undefined };
}

/** `outcome` is undefined for a run whose outcome could not be recorded (it runs again). */
export function endTaskSpan(span: Span, outcome: string | undefined, error: unknown): void {
  if (!span.isRecording()) return span.end();
  if (outcome !== undefined) span.setAttribute("webhook_tasks.outcome", outcome);
  if (error !== undefined) {
    if (error instanceof Error) span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    span.setAttribute("error.type", error instanceof Error ? error.name : "Error");
  }
  span.end();
}

/**
 * The context active now while an SDK is registered (inside a request, its span's), for
 * callbacks that run outside it, such as a stream's events; undefined without an SDK.
 */
export function activeTracingContext(): Context | undefined {
  return tracingIsNoop() ? undefined : context.active();
}

/** Runs `fn` with `ctx` active (when there is one). */
export function runIn<T>(ctx: Context | undefined, fn: () => T): T {
  return ctx === undefined ? fn() : context.with(ctx, fn);
}
