import { EVENT_STATUSES, type EventStatus, type HistoryQuery } from "../store/history";
import { checkHistoryQuery, HistoryQueryError } from "../store/history-query";
import { isCalendarDate } from "../util/calendar-date";

/** The list's filter as the page's form and links carry it: every field of HistoryQuery as text. */
export const FILTER_FIELDS = ["source", "task", "status", "since", "until", "search", "limit", "cursor"] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];
export type FilterText = Partial<Record<FilterField, string>>;

export class FilterError extends Error {}

const RELATIVE = /^(\d+)\s*(s|m|min|h|d)$/i;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
/** The farthest time a Date can hold, either side of the epoch. */
const MAX_TIME_MS = 8.64e15;

/**
 * A time as the form takes it: "15m", "2h", "7d" (that long ago), an ISO date or date-time
 * ("2026-11-25", "2026-11-25T18:00Z"; without a zone: UTC), or milliseconds since the epoch.
 */
export function parseTime(text: string, field: string, now = Date.now()): number {
  const value = text.trim();
  const relative = RELATIVE.exec(value);
  // A number of digits past any date is no time either (Infinity would reach the store as one).
  const within = (ms: number): number | undefined => (Number.isFinite(ms) && Math.abs(ms) <= MAX_TIME_MS ? ms : undefined);
  if (relative !== null) {
    const ms = within(now - Number(relative[1]) * UNIT_MS[relative[2].toLowerCase()]);
    if (ms !== undefined) return ms;
  } else if (/^\d{10,}$/.test(value)) {
    const ms = within(Number(value));
    if (ms !== undefined) return ms;
  }
  const iso = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(value);
  if (iso !== null && isCalendarDate(value)) {
    const withZone = iso[4] === undefined ? `${value.replace(" ", "T")}${iso[1] === undefined ? "T00:00" : ""}Z` : value.replace(" ", "T");
    const ms = Date.parse(withZone);
    if (Number.isFinite(ms)) return ms;
  }
  throw new FilterError(`${field}: "${text}" is not a time: write 15m, 2h, 7d (ago), 2026-11-25T18:00Z, or milliseconds since the epoch`);
}

/** The filter's text from a query string (Express's req.query): each field once, as text. */
export function filterText(query: Record<string, unknown>): FilterText {
  const out: FilterText = {};
  for (const field of FILTER_FIELDS) {
    const value = query[field];
    if (value === undefined || value === "") continue;
    if (typeof value !== "string") throw new FilterError(`${field} must be given once`);
    out[field] = value;
  }
  return out;
}

/** The HistoryQuery the text means; a FilterError says which field is wrong and why. */
export function historyQuery(text: FilterText, now = Date.now()): HistoryQuery {
  const query: { -readonly [K in keyof HistoryQuery]: HistoryQuery[K] } = {};
  if (text.source !== undefined) query.source = text.source;
  if (text.task !== undefined) query.task = text.task;
  if (text.status !== undefined) {
    if (!(EVENT_STATUSES as readonly string[]).includes(text.status)) throw new FilterError(`status: "${text.status}" is not one of ${EVENT_STATUSES.join(", ")}`);
    query.status = text.status as EventStatus;
  }
  if (text.since !== undefined) query.since = parseTime(text.since, "since", now);
  if (text.until !== undefined) query.until = parseTime(text.until, "until", now);
  if (query.since !== undefined && query.until !== undefined && query.since >= query.until) throw new FilterError("since must be before until");
  if (text.search !== undefined) {
    if (text.search.length > 1000) throw new FilterError("search is longer than 1,000 characters");
    query.search = text.search;
  }
  if (text.limit !== undefined) {
    const limit = Number(text.limit);
    if (!/^\d+$/.test(text.limit) || limit < 1 || limit > 500) throw new FilterError(`limit: "${text.limit}" is not a number from 1 to 500`);
    query.limit = limit;
  }
  if (text.cursor !== undefined) query.cursor = text.cursor;
  // The history's own check too (a cursor it did not give, U+0000): refused here, before any page or replay asks.
  try {
    checkHistoryQuery(query);
  } catch (error) {
    if (error instanceof HistoryQueryError) throw new FilterError(error.message);
    throw error;
  }
  return query;
}

/** The text as query parameters (links to other pages of the same list), without `omit`. */
export function filterParams(text: FilterText, omit: readonly FilterField[] = []): URLSearchParams {
  const params = new URLSearchParams();
  for (const field of FILTER_FIELDS) {
    const value = text[field];
    if (value !== undefined && !omit.includes(field)) params.set(field, value);
  }
  return params;
}

/** Whether the filter narrows anything (a bulk replay of everything is asked for twice). */
export function narrows(text: FilterText): boolean {
  return FILTER_FIELDS.some((f) => f !== "limit" && f !== "cursor" && text[f] !== undefined);
}

/** The filter's text from a query or a form, or why it cannot be read (a field given twice). */
export function readFilter(query: Record<string, unknown>): { text: FilterText; error?: string } {
  try {
    return { text: filterText(query) };
  } catch (error) {
    if (!(error instanceof FilterError)) throw error;
    return { text: {}, error: error.message };
  }
}
