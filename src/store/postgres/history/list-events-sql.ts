import { DELIVERY_STATUSES, type HistoryQuery } from "../../history";
import { decodeCursor } from "./history-cursor";
import { parseSearch } from "./history-search";
import { deliveriesJsonSql, deliveryStatusSql, STATUS_CODES, type HistoryTables } from "./history-tables";

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;

/** Columns of an event in a list: enough to find it (no payload, no runs). */
export function summaryColumns(tables: HistoryTables, e: string): string {
  return `${e}.id, ${e}.received_at, ${e}.source, ${e}.queue, ${e}.name, ${e}.parent_id, ${e}.replay_of, ${deliveriesJsonSql(tables, e)} AS deliveries`;
}

/**
 * One page of events, newest first, one more than the page so the caller knows whether there
 * is a next. With a task, the walk follows that task's index on the deliveries (newest first);
 * otherwise the events' time index (or the source's). The failed and dead filters start from
 * the runs in that state, which are few; the others check each event walked.
 */
export function listEventsSql(tables: HistoryTables, query: HistoryQuery): { text: string; values: unknown[]; limit: number } {
  const limit = pageSize(query.limit);
  const values: unknown[] = [];
  const param = (value: unknown, cast: string): string => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const { events, deliveries, runs } = tables;
  const where: string[] = [];
  const byTask = query.task !== undefined;
  // The walk's time and id columns: the task's deliveries, or the events.
  const [at, id] = byTask ? ["t.received_at", "t.event_id"] : ["e.received_at", "e.id"];
  if (query.task !== undefined) where.push(`t.task = ${param(text("task", query.task), "text")}`);
  if (query.source !== undefined) where.push(`e.source = ${param(text("source", query.source), "text")}`);
  if (query.since !== undefined) where.push(`${at} >= ${param(time("since", query.since), "float8")}`);
  if (query.until !== undefined) where.push(`${at} < ${param(time("until", query.until), "float8")}`);
  if (query.cursor !== undefined) {
    const cursor = decodeCursor(query.cursor);
    where.push(`(${at}, ${id}) < (${param(cursor.receivedAt, "float8")}, ${param(cursor.id, "text")})`);
  }
  if (query.status !== undefined) {
    if (!DELIVERY_STATUSES.includes(query.status)) {
      throw new TypeError(`history: status must be one of ${DELIVERY_STATUSES.join(", ")}, got ${JSON.stringify(query.status)}`);
    }
    // A literal (from the list above): the partial index on failed and dead runs is then usable.
    const code = STATUS_CODES[query.status];
    if (byTask) where.push(`${deliveryStatusSql(runs, "t")} = ${code}`);
    else {
      if (code >= 2) where.push(`e.id IN (SELECT u.event_id FROM ${runs} u WHERE u.status = ${code})`);
      where.push(`EXISTS (SELECT 1 FROM ${deliveries} d WHERE d.event_id = e.id AND ${deliveryStatusSql(runs, "d")} = ${code})`);
    }
  }
  if (query.search !== undefined) where.push(searchSql(text("search", query.search), param));
  const from = byTask ? `${deliveries} t JOIN ${events} e ON e.id = t.event_id` : `${events} e`;
  const sql = `SELECT ${summaryColumns(tables, "e")}
    FROM ${from}
    ${where.length > 0 ? `WHERE ${where.join("\n      AND ")}` : ""}
    ORDER BY ${at} DESC, ${id} DESC
    LIMIT ${param(limit + 1, "integer")}`;
  return { text: sql, values, limit };
}

/**
 * `path=value`: the body field (the payload itself for a queue's event) equals value, as text;
 * anything else: the id, or any header's value. The GIN indexes narrow, the exact test decides.
 */
function searchSql(search: string, param: (value: unknown, cast: string) => string): string {
  const parsed = parseSearch(search);
  const byId = `e.id = ${param(search, "text")}`;
  if (parsed.kind === "text") {
    const header = `(e.source IS NOT NULL AND jsonb_path_query_array(e.payload -> 'headers', '$.*[*]') @> jsonb_build_array(${param(search, "text")}))`;
    return `(${byId} OR ${header})`;
  }
  const body = "(CASE WHEN e.source IS NULL THEN e.payload ELSE e.payload -> 'body' END)";
  const exact = `${body} #>> ${param(parsed.path, "text[]")} = ${param(parsed.value, "text")}`;
  const narrowed = parsed.candidates.length === 0 ? exact : `(${parsed.candidates.map((c) => `${body} @> ${param(c, "jsonb")}`).join(" OR ")}) AND ${exact}`;
  return `(${byId} OR (${narrowed}))`;
}

function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1) throw new TypeError(`history: limit must be a whole number of 1 or more, got ${String(limit)}`);
  return Math.min(limit, MAX_PAGE);
}

function text(name: string, value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`history: ${name} must be a string, got ${typeof value}`);
  return value;
}

function time(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new TypeError(`history: ${name} must be a time in ms since the epoch, got ${String(value)}`);
  return value;
}
