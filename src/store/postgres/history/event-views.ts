import type { DeliveryView, EventOrigin, EventSummary, RunOutcome, RunRecord } from "../../history";
import { revivedJson } from "./history-json";
import { statusName } from "./history-tables";

/*
 * Rows of the history's queries as the HistoryStore hands them out: optional fields absent
 * rather than undefined (deep equality in tests, JSON output), a JSON body parsed again from
 * its raw bytes.
 */

interface DeliveryRow {
  readonly task: string;
  readonly queue: string;
  readonly messageId: string;
  readonly status: number;
  readonly attempts: number;
  readonly lastError: string | null;
}

export interface RunRow {
  readonly task: string;
  readonly attempt: number;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly outcome: RunOutcome;
  readonly errorType: string | null;
  readonly errorMessage: string | null;
  readonly errorStack: string | null;
  readonly emitted: string[] | null;
}

export function summaryOf(row: Record<string, unknown>): EventSummary {
  const deliveries = (row.deliveries as DeliveryRow[]).map((d): DeliveryView => {
    const status = statusName(d.status);
    const view: DeliveryView = { task: d.task, queue: d.queue, messageId: d.messageId, status, attempts: Number(d.attempts) };
    return withOptional(view, "lastError", d.lastError ?? undefined);
  });
  // The worst of the deliveries' statuses (codes rise with how bad it is).
  const worst = deliveries.reduce((code, d) => Math.max(code, STATUS_RANK[d.status]), -1);
  const origin: EventOrigin = row.source !== null ? { kind: "webhook", source: row.source as string } : { kind: "queue", queue: (row.queue as string | null) ?? "" };
  // A source's event with no deliveries is one no task took (stored with no tasks).
  const none = origin.kind === "webhook" ? "unrouted" : "pending";
  let summary: EventSummary = { id: row.id as string, origin, receivedAt: Number(row.received_at), status: worst < 0 ? none : statusName(worst), deliveries };
  summary = withOptional(summary, "name", optionalText(row.name));
  summary = withOptional(summary, "parentId", optionalText(row.parent_id));
  return withOptional(summary, "replayOf", optionalText(row.replay_of));
}

const STATUS_RANK = { succeeded: 0, pending: 1, failed: 2, dead: 3 } as const;

export function runOf(row: RunRow): RunRecord {
  let run: RunRecord = { task: row.task, attempt: row.attempt, startedAt: row.startedAt, durationMs: row.durationMs, outcome: row.outcome };
  if (row.errorType !== null || row.errorMessage !== null) {
    const error = withOptional({ type: row.errorType ?? "Error", message: row.errorMessage ?? "" }, "stack", row.errorStack ?? undefined);
    run = { ...run, error };
  }
  return withOptional(run, "emitted", row.emitted ?? undefined);
}

/** The payload as noted: its body parsed again from the raw bytes when it was stored in them alone. */
export function payloadOf(row: Record<string, unknown>): unknown {
  const payload = revivedJson(row.payload);
  if (row.body_from_raw !== true || typeof payload !== "object" || payload === null) return payload;
  const text = (row.raw as Buffer).toString("utf8");
  // Earlier versions stored bytes starting with a BOM this way too: read past it, as the webhook's parse did.
  return { body: JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown, ...(payload as Record<string, unknown>) };
}

export function optionalText(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** `object` with `key` set only when `value` is defined: absent fields stay absent (deep equality in tests, JSON output). */
export function withOptional<T extends object, K extends string, V>(object: T, key: K, value: V | undefined): T {
  return value === undefined ? object : { ...object, [key]: value };
}
