/**
 * What every engine's history shares when it answers a query in process (the memory engine, the
 * embedded engine): checking a query, parsing its search, the cursor's form, and how a
 * delivery's runs roll up into statuses. An engine answering in SQL follows the same rules.
 */

import {
  EVENT_STATUSES,
  type DeliveryNote,
  type DeliveryStatus,
  type EventStatus,
  type EventSummary,
  type DeliveryView,
  type EventOrigin,
  type HistoryQuery,
  type RunNote,
  type RunRecord,
} from "./history";
import { didYouMean } from "../util/did-you-mean";

const QUERY_KEYS = ["source", "task", "status", "since", "until", "search", "limit", "cursor"];

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 500;

/** A query the history cannot answer: a bad status, limit, time or cursor, or text holding U+0000. */
export class HistoryQueryError extends TypeError {
  override readonly name = "HistoryQueryError";
}

/** Where a page ends: the last event's receipt time and id (pages are ordered by both, newest first). */
export interface CursorPosition {
  readonly receivedAt: number;
  readonly id: string;
}

/**
 * A query's search, parsed: a JSON body field equal to a value (`number`: the value when it is
 * written as a JSON number, which a numeric field equals by value), or an id or header value.
 */
export type ParsedSearch =
  | { readonly kind: "field"; readonly path: readonly string[]; readonly value: string; readonly number?: number }
  | { readonly kind: "text"; readonly value: string };

/** A query checked, with its limit, search and cursor resolved. */
export interface CheckedQuery {
  readonly source?: string;
  readonly task?: string;
  readonly status?: EventStatus;
  readonly since?: number;
  readonly until?: number;
  readonly search?: ParsedSearch;
  readonly limit: number;
  readonly after?: CursorPosition;
}

/** Checks a list query; throws HistoryQueryError naming the field and what it takes. */
export function checkHistoryQuery(query: HistoryQuery = {}): CheckedQuery {
  if (typeof query !== "object" || query === null) throw new HistoryQueryError("a history query is an object { source?, task?, status?, since?, until?, search?, limit?, cursor? }");
  for (const key of Object.keys(query)) {
    // A misspelt key would widen the query silently: a bulk replay of everything instead of a few.
    if (!QUERY_KEYS.includes(key)) {
      const guess = didYouMean(key, QUERY_KEYS);
      throw new HistoryQueryError(`${JSON.stringify(key)} is not a history filter${guess ? ` (did you mean "${guess}"?)` : ""}; use ${QUERY_KEYS.join(", ")}`);
    }
  }
  const { source, task, status, since, until, search, limit, cursor } = query;
  for (const [name, value] of [["source", source], ["task", task], ["search", search], ["cursor", cursor]] as const) {
    if (value !== undefined && (typeof value !== "string" || value === "")) throw new HistoryQueryError(`${name} must be a non-empty string, got ${shown(value)}`);
    // No text stored holds U+0000 (PostgreSQL refuses it in any text): refused alike on every engine.
    if (value?.includes("\u0000") === true) throw new HistoryQueryError(`${name} must not contain the character U+0000, got ${shown(value)}`);
  }
  if (status !== undefined && !EVENT_STATUSES.includes(status)) {
    throw new HistoryQueryError(`status must be one of ${EVENT_STATUSES.join(", ")}, got ${shown(status)}`);
  }
  for (const [name, value] of [["since", since], ["until", until]] as const) {
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value))) throw new HistoryQueryError(`${name} must be a time in milliseconds since the epoch, got ${shown(value)}`);
  }
  if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT)) {
    throw new HistoryQueryError(`limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${shown(limit)}`);
  }
  return {
    source,
    task,
    status,
    since,
    until,
    search: search === undefined ? undefined : parseSearch(search),
    limit: limit ?? DEFAULT_LIST_LIMIT,
    after: cursor === undefined ? undefined : decodeCursor(cursor),
  };
}

/** A number as JSON writes it: `4200`, `4200.0`, `-1.5`, `1e2`. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * Whether a search value is a number every engine compares by value: JSON's form, and within
 * what PostgreSQL's numeric holds (an exponent past a thousand, or a thousand digits, is text).
 */
function comparableNumber(value: string): boolean {
  if (value.length > 1_000 || !JSON_NUMBER.test(value)) return false;
  const exponent = /[eE]([+-]?\d+)$/.exec(value);
  return exponent === null || Math.abs(Number(exponent[1])) <= 1_000;
}

/** `path=value` (a dotted path of the JSON body) or anything else (an id or a header value). */
export function parseSearch(search: string): ParsedSearch {
  const eq = search.indexOf("=");
  if (eq > 0) {
    const path = search.slice(0, eq).split(".");
    const value = search.slice(eq + 1);
    if (path.every((part) => part !== "")) return comparableNumber(value) ? { kind: "field", path, value, number: Number(value) } : { kind: "field", path, value };
  }
  return { kind: "text", value: search };
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.receivedAt, position.id])).toString("base64url");
}

export function decodeCursor(cursor: string): CursorPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== "number" || !Number.isFinite(parsed[0]) || typeof parsed[1] !== "string" || parsed[1].includes("\u0000")) {
    throw new HistoryQueryError(`cursor ${shown(cursor)} is not one this history gave: pass a page's "next" as it is`);
  }
  return { receivedAt: parsed[0], id: parsed[1] };
}

/** Newest first; at the same time, the greater id first (ids compared as code units, SQL's COLLATE "C"). */
export function newestFirst(a: CursorPosition, b: CursorPosition): number {
  if (a.receivedAt !== b.receivedAt) return b.receivedAt - a.receivedAt;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** True when `event` comes after the cursor's position in newest-first order (it is on a later page). */
export function isPast(event: CursorPosition, after: CursorPosition): boolean {
  return event.receivedAt < after.receivedAt || (event.receivedAt === after.receivedAt && event.id < after.id);
}

/** Worst first: an event's status is the worst of its deliveries'. */
const SEVERITY: Readonly<Record<DeliveryStatus, number>> = { succeeded: 0, pending: 1, failed: 2, dead: 3 };

/** The worst of `statuses`: dead, then failed, then pending, then succeeded; pending when there are none (the value waits in its queue). */
export function worstStatus(statuses: Iterable<DeliveryStatus>): DeliveryStatus {
  let worst: DeliveryStatus | undefined;
  for (const status of statuses) if (worst === undefined || SEVERITY[status] > SEVERITY[worst]) worst = status;
  return worst ?? "pending";
}

/** An event's status: `unrouted` for a source's event kept with no deliveries (no task took it), else the worst of its deliveries'. */
export function eventStatus(origin: EventOrigin, deliveries: readonly DeliveryView[]): EventStatus {
  if (deliveries.length === 0 && origin.kind === "webhook") return "unrouted";
  return worstStatus(deliveries.map((d) => d.status));
}

/** Whether a summary satisfies the query's task and status (`unrouted`: no task took it, so no task filter matches). */
export function matchesStatus(summary: EventSummary, task: string | undefined, status: EventStatus | undefined): boolean {
  if (status === "unrouted") return task === undefined && summary.status === "unrouted";
  // No deliveries (a queue's value no task of this app consumes): found by its own status, pending, and by no task.
  if (summary.deliveries.length === 0) return task === undefined && (status === undefined || status === summary.status);
  return matchesDeliveries(summary.deliveries, task, status);
}

/**
 * A delivery as the history shows it, from the runs noted for its task (in the order noted):
 * the last run's status, the number of runs, the last run's error message when it failed.
 */
export function deliveryView(delivery: DeliveryNote, runs: readonly RunNote[]): DeliveryView {
  let last: RunNote | undefined;
  let attempts = 0;
  for (const run of runs) {
    if (run.run.task !== delivery.task) continue;
    attempts++;
    last = run;
  }
  if (last === undefined) return { ...delivery, status: "pending", attempts: 0 };
  const lastError = last.run.outcome !== "success" ? last.run.error?.message : undefined;
  return lastError === undefined ? { ...delivery, status: last.status, attempts } : { ...delivery, status: last.status, attempts, lastError };
}

/** What a search looks into: a webhook event's parsed body and headers; a queue event's value itself. */
export function searchedParts(origin: EventOrigin, payload: unknown): { body: unknown; headers: Record<string, unknown> | undefined } {
  if (origin.kind !== "webhook") return { body: payload, headers: undefined };
  if (typeof payload !== "object" || payload === null) return { body: undefined, headers: undefined };
  const { body, headers } = payload as { body?: unknown; headers?: unknown };
  return { body, headers: typeof headers === "object" && headers !== null ? (headers as Record<string, unknown>) : undefined };
}

/** Whether an event (its id, origin and payload) matches a parsed search. */
export function matchesSearch(search: ParsedSearch, id: string, origin: EventOrigin, payload: unknown): boolean {
  const { body, headers } = searchedParts(origin, payload);
  if (search.kind === "field") {
    let value: unknown = body;
    for (const part of search.path) {
      // Own fields only, as PostgreSQL's #> reads them: not `length`, not `__proto__`'s prototype.
      if (typeof value !== "object" || value === null || !Object.prototype.hasOwnProperty.call(value, part)) return false;
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined) return false;
    // A value an emitted value may hold that JSON has no type for, found as PostgreSQL's history keeps
    // it (and finds it): a bigint by its digits, a Date by its ISO text (both kept there as strings).
    if (typeof value === "bigint") value = value.toString();
    else if (value instanceof Date) value = value.toJSON() ?? null;
    // A number equals a value written as a number by value (`4200.0`, `1e2` find 4200 and 100), as PostgreSQL's jsonb compares them.
    if (typeof value === "number") {
      if (search.number !== undefined) return value === search.number;
      // 1e400 in a body parses as Infinity, which JSON writes as null: it is no null.
      if (!Number.isFinite(value)) return false;
    }
    return fieldText(value) === search.value;
  }
  if (id === search.value) return true;
  if (headers === undefined) return false;
  for (const value of Object.values(headers)) {
    if (value === search.value) return true;
    if (Array.isArray(value) && value.includes(search.value)) return true;
  }
  return false;
}

/** A body field as text, as a search compares it: a string as it is, anything else as JSON (`42`, `true`, `null`). */
export function fieldText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    // A bigint inside (JSON.stringify refuses it, and one event would fail the whole search): its digits, as a string.
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  }
}

/** Whether a summary's deliveries satisfy the query's task and status. */
export function matchesDeliveries(deliveries: readonly DeliveryView[], task: string | undefined, status: DeliveryStatus | undefined): boolean {
  if (task === undefined && status === undefined) return true;
  for (const delivery of deliveries) {
    if ((task === undefined || delivery.task === task) && (status === undefined || delivery.status === status)) return true;
  }
  return false;
}

/** Start of the bucket holding `time`. */
export function bucketOf(time: number, bucketMs: number): number {
  return Math.floor(time / bucketMs) * bucketMs;
}

function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  return typeof value === "number" || typeof value === "boolean" || value === null ? String(value) : typeof value;
}

/**
 * An event's runs oldest first: by start, then attempt, then task (code-unit order), as
 * PostgreSQL's history orders them. Noted runs come in the order they ended, which differs
 * when tasks of a fanned-out event overlap (a slow one that started first ends last).
 */
export function runsOldestFirst(runs: readonly RunRecord[]): RunRecord[] {
  const sorted = [...runs];
  for (let i = 1; i < sorted.length; i++) {
    // Nearly always in order already (one task, or tasks that did not overlap): sort only when not.
    if (compareRuns(sorted[i - 1]!, sorted[i]!) > 0) return sorted.sort(compareRuns);
  }
  return sorted;
}

function compareRuns(a: RunRecord, b: RunRecord): number {
  return a.startedAt - b.startedAt || a.attempt - b.attempt || (a.task < b.task ? -1 : a.task > b.task ? 1 : 0);
}
