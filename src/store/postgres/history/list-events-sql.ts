import { checkHistoryQuery, type ParsedSearch } from "../../history-query";
import type { HistoryQuery } from "../../history";
import { deliveriesJsonSql, deliveryStatusSql, STATUS_CODES, type HistoryTables } from "./history-tables";

/** Columns of an event in a list: enough to find it (no payload, no runs). */
export function summaryColumns(tables: HistoryTables, e: string): string {
  return `${e}.id, ${e}.received_at, ${e}.source, ${e}.queue, ${e}.name, ${e}.parent_id, ${e}.replay_of, ${deliveriesJsonSql(tables, e)} AS deliveries`;
}

/**
 * One page of events, newest first, one more than the page so the caller knows whether there
 * is a next: the events' time index walked backwards (or the source's), or the task indexes
 * when that is cheaper. The failed and dead filters start from the runs in that state,
 * which are few; the others check each event walked. Ids compare as bytes (their columns are
 * COLLATE "C"), as the other engines compare them.
 */
export function listEventsSql(tables: HistoryTables, query: HistoryQuery): { text: string; values: unknown[]; limit: number } {
  const checked = checkHistoryQuery(query);
  const { limit } = checked;
  const values: unknown[] = [];
  const param = (value: unknown, cast: string): string => {
    values.push(value);
    return `$${values.length}::${cast}`;
  };
  const { events, runs } = tables;
  const where: string[] = [];
  let task: string | undefined;
  if (checked.task !== undefined) {
    task = param(checked.task, "text");
    // The first task's btree, or the GIN index of events with several tasks (see the migration).
    where.push(`(e.tasks[1] = ${task} OR (cardinality(e.tasks) > 1 AND e.tasks @> ARRAY[${task}]))`);
  }
  if (checked.source !== undefined) where.push(`e.source = ${param(checked.source, "text")}`);
  if (checked.since !== undefined) where.push(`e.received_at >= ${param(checked.since, "float8")}`);
  if (checked.until !== undefined) where.push(`e.received_at < ${param(checked.until, "float8")}`);
  if (checked.after !== undefined) {
    where.push(`(e.received_at, e.id) < (${param(checked.after.receivedAt, "float8")}, ${param(checked.after.id, "text")})`);
  }
  if (checked.status === "unrouted") {
    // Unrouted: a source's event stored with no tasks (a routed one always has one); an empty
    // array's first task is NULL, which the first task's btree finds.
    where.push(`e.tasks[1] IS NULL AND e.source IS NOT NULL`);
  } else if (checked.status !== undefined) {
    // A literal (from a checked status): the partial index on failed and dead runs is then usable.
    const code = STATUS_CODES[checked.status];
    if (code >= 2) where.push(`e.id IN (SELECT u.event_id FROM ${runs} u WHERE u.status = ${code})`);
    if (task !== undefined) where.push(`${deliveryStatusSql(runs, "e.id", task)} = ${code}`);
    else {
      const delivered = `EXISTS (SELECT 1 FROM unnest(e.tasks) AS d(task) WHERE ${deliveryStatusSql(runs, "e.id", "d.task")} = ${code})`;
      // A queue's value no task of this app consumes (no tasks) is pending, as its summary says.
      where.push(checked.status === "pending" ? `(${delivered} OR (e.tasks[1] IS NULL AND e.source IS NULL))` : delivered);
    }
  }
  if (checked.search !== undefined) where.push(searchSql(events, checked.search, param));
  const sql = `SELECT ${summaryColumns(tables, "e")}
    FROM ${events} e
    ${where.length > 0 ? `WHERE ${where.join("\n      AND ")}` : ""}
    ORDER BY e.received_at DESC, e.id DESC
    LIMIT ${param(limit + 1, "integer")}`;
  return { text: sql, values, limit };
}

/**
 * A field search: the body's field (the value itself for a queue's event), a string equal to
 * the value, or anything else equal to the value read as JSON; tested on each event walked
 * (bodies are not indexed). A text search: the id, or a header's value (the headers' GIN index).
 */
function searchSql(events: string, search: ParsedSearch, param: (value: unknown, cast: string) => string): string {
  if (search.kind === "text") {
    // Found through the indexes first (an OR of the two in the main query would have the
    // planner walk the whole history newest first, hoping for an early match).
    const text = param(search.value, "text");
    return `e.id = ANY(ARRAY(SELECT x.id FROM ${events} x WHERE x.id = ${text}
      UNION SELECT x.id FROM ${events} x WHERE x.source IS NOT NULL AND jsonb_path_query_array(x.payload -> 'headers', '$.*[*]') @> jsonb_build_array(${text})))`;
  }
  // ltrim: earlier versions stored bytes starting with a BOM in the raw column alone too (jsonb refuses a BOM).
  const body = "(CASE WHEN e.source IS NULL THEN e.payload WHEN e.body_from_raw THEN ltrim(convert_from(e.raw, 'UTF8'), chr(65279))::jsonb ELSE e.payload -> 'body' END)";
  const field = `(${body} #> ${param(search.path, "text[]")})`;
  const asString = `(jsonb_typeof(${field}) = 'string' AND ${field} #>> '{}' = ${param(search.value, "text")})`;
  // A number as written (jsonb compares numbers by value, `1e400` included); other JSON only as
  // JSON.stringify writes it, as the other engines compare it (no spaces around a `true`).
  const json = search.number !== undefined ? search.value : canonicalJson(search.value);
  if (json === undefined) return asString;
  return `(${asString} OR (jsonb_typeof(${field}) <> 'string' AND ${field} = ${param(json, "jsonb")}))`;
}

/** The value when it is JSON exactly as JSON.stringify writes it (true, null, [1,2], ...), else undefined. */
function canonicalJson(value: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(value)) === value ? value : undefined;
  } catch {
    return undefined;
  }
}
