import type { DeliveryView, EventOrigin, EventSummary, HistoryEvent, HistoryPage, RunRecord } from "../store/history";
import { redactSecretHeaders } from "../util/redact-headers";
import { clip, formatTable } from "./table";
import { printableReplacer } from "./printable-json";
import { visible } from "./visible-text";

/** The list as a table, newest first, and how to ask for the next page. */
export function eventsTable(page: HistoryPage): string[] {
  if (page.events.length === 0) return ["no events match"];
  const lines = formatTable(
    ["ID", "RECEIVED", "FROM", "NAME", "STATUS", "DELIVERIES"],
    page.events.map((e) => [e.id, time(e.receivedAt), from(e.origin) + links(e), e.name ?? "-", e.status, e.deliveries.map(delivery).join(" ") || "-"].map(visible)),
  );
  return page.next === undefined ? lines : [...lines, `more: add --cursor ${page.next}`];
}

/** One event in full: what it is, its deliveries, every run with its error, its links, then its headers (redacted) and body. */
export function eventDetails(event: HistoryEvent): string[] {
  const payload = redactSecretHeaders(event.payload);
  const webhook = event.origin.kind === "webhook" && isRecord(payload);
  const lines = [
    `id:          ${event.id}`,
    `received at: ${time(event.receivedAt)}`,
    `from:        ${from(event.origin)}`,
    ...(event.name === undefined ? [] : [`name:        ${event.name}`]),
    `status:      ${event.status}`,
    ...(event.parentId === undefined ? [] : [`parent:      ${event.parentId}`]),
    ...(event.replayOf === undefined ? [] : [`replay of:   ${event.replayOf}`]),
    `replays:     ${event.replays.length === 0 ? "-" : event.replays.join(", ")}`,
    `children:    ${event.children.length === 0 ? "-" : event.children.join(", ")}`,
    ...(event.traceId === undefined ? [] : [`trace id:    ${event.traceId}`]),
    "",
    "deliveries:",
    ...indent(
      event.deliveries.length === 0
        ? ["- (no task took it)"]
        : formatTable(
            ["TASK", "QUEUE", "MESSAGE", "STATUS", "ATTEMPTS", "LAST ERROR"],
            event.deliveries.map((d) => [d.task, d.queue, d.messageId, d.status, String(d.attempts), d.lastError === undefined ? "-" : clip(d.lastError, 60)]),
          ),
    ),
    "",
    "runs:",
    ...(event.runs.length === 0 ? ["  - (none yet)"] : event.runs.flatMap(run)),
  ];
  if (webhook) {
    const { headers, body, ...rest } = payload;
    lines.push("", "headers (credentials and signatures redacted):", ...indent(pretty(headers ?? {})));
    const meta = Object.keys(rest).length === 0 ? [] : pretty(rest);
    if (meta.length > 0) lines.push("", "request:", ...indent(meta));
    lines.push("", "body:", ...indent(typeof body === "string" ? body.split("\n") : pretty(body ?? null)));
  } else {
    lines.push("", "value:", ...indent(pretty(payload ?? null)));
  }
  if (event.raw !== undefined) lines.push("", `raw body: ${event.raw.length} bytes (--json gives them as base64)`);
  return lines.map(visible);
}


/** An event's list entry as JSON: times as ISO strings. */
export function summaryJson(event: EventSummary): Record<string, unknown> {
  return { ...event, receivedAt: iso(event.receivedAt) };
}

/** An event in full as JSON: times as ISO strings, headers redacted, the raw body as base64. */
export function eventJson(event: HistoryEvent): Record<string, unknown> {
  const { raw, payload, runs, ...rest } = event;
  return {
    ...rest,
    receivedAt: iso(event.receivedAt),
    runs: runs.map((r) => ({ ...r, startedAt: iso(r.startedAt) })),
    payload: JSON.parse(JSON.stringify(redactSecretHeaders(payload) ?? null, printableReplacer)) as unknown,
    ...(raw === undefined ? {} : { rawBase64: Buffer.from(raw).toString("base64") }),
  };
}

function run(r: RunRecord, index: number): string[] {
  const head = `  ${index + 1}. ${r.task}  attempt ${r.attempt}  ${time(r.startedAt)}  ${r.durationMs.toFixed(1)}ms  ${r.outcome}`;
  const emitted = r.emitted === undefined || r.emitted.length === 0 ? [] : [`     emitted: ${r.emitted.join(", ")}`];
  if (r.error === undefined) return [head, ...emitted];
  const stack = r.error.stack === undefined ? [] : r.error.stack.split("\n").slice(1).map((l) => `       ${l.trim()}`);
  return [head, `     error: ${r.error.type}: ${r.error.message}`, ...stack, ...emitted];
}

function delivery(d: DeliveryView): string {
  return `${d.task}:${d.status}${d.attempts > 1 ? `(${d.attempts})` : ""}`;
}

function from(origin: EventOrigin): string {
  return origin.kind === "webhook" ? `source ${origin.source}` : `queue ${origin.queue}`;
}

/** Marks a replay or an emitted event in the list. */
function links(e: EventSummary): string {
  if (e.replayOf !== undefined) return " (replay)";
  if (e.parentId !== undefined) return " (emitted)";
  return "";
}

function pretty(value: unknown): string[] {
  return (JSON.stringify(value, printableReplacer, 2) ?? "undefined").split("\n");
}

function indent(lines: readonly string[]): string[] {
  return lines.map((l) => `  ${l}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}


function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function time(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
