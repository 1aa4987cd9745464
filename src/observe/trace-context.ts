import { context, isSpanContextValid, ROOT_CONTEXT, trace, TraceFlags, type Context, type SpanContext } from "@opentelemetry/api";

/*
 * The trace context stored with a message (QueuedMessage.traceContext) is a W3C Trace Context
 * carrier: `traceparent`, and `tracestate` when there is one. It is written and read here,
 * whatever propagator the application registered, so that a stored message can be picked up
 * by another process or a later version and its trace continues.
 */

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE = "00000000000000000000000000000000";
const INVALID_SPAN = "0000000000000000";

/** The carrier for a span context; undefined for an invalid one (no SDK registered). */
export function carrierOf(spanContext: SpanContext | undefined): Record<string, string> | undefined {
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return undefined;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, "0");
  const carrier: Record<string, string> = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}` };
  const state = spanContext.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/** The carrier of the span active now (the request's span inside a receiver), if any. */
export function currentTraceContext(): Record<string, string> | undefined {
  const span = trace.getSpan(context.active());
  return span === undefined ? undefined : carrierOf(span.spanContext());
}

/** The span context a `traceparent` value names; undefined when it is malformed. */
export function parseTraceparent(value: unknown): SpanContext | undefined {
  if (typeof value !== "string") return undefined;
  const match = TRACEPARENT.exec(value.trim().toLowerCase());
  if (match === null || match[1] === INVALID_TRACE || match[2] === INVALID_SPAN) return undefined;
  return { traceId: match[1], spanId: match[2], traceFlags: parseInt(match[3], 16) & TraceFlags.SAMPLED, isRemote: true };
}

/** A context whose parent is the stored carrier's span; the root context when there is none. */
export function contextOfCarrier(carrier: Readonly<Record<string, string>> | undefined): Context {
  const parent = parseTraceparent(carrier?.traceparent);
  return parent === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, parent);
}
