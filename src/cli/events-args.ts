import type { ReplayFilter } from "../app/events-api";
import { EVENT_STATUSES, type EventStatus, type HistoryQuery } from "../store/history";
import { decodeCursor, HistoryQueryError, MAX_LIST_LIMIT } from "../store/history-query";
import { APP_OPTIONS, APP_USAGE, appRefOf, type AppRef } from "./app-argument";
import { parseCommandArgs } from "./command-args";
import { parseTimeFlag } from "./time-flag";
import { UsageError } from "./usage";
import { didYouMean } from "../util/did-you-mean";

type Action = "list" | "show" | "replay";
const ACTIONS: readonly Action[] = ["list", "show", "replay"];

/** The flags of the history's list filter (HistoryQuery without paging). */
const FILTER_FLAGS = ["source", "task", "status", "since", "until", "search"] as const;

/** A parsed `events` command line. */
export type EventsRequest =
  | { readonly action: "list"; readonly query: HistoryQuery; readonly json: boolean; readonly app: AppRef }
  | { readonly action: "show"; readonly id: string; readonly json: boolean; readonly app: AppRef }
  | { readonly action: "replay"; readonly id: string; readonly task: string | undefined; readonly json: boolean; readonly app: AppRef }
  | {
      readonly action: "bulk-replay";
      readonly filter: ReplayFilter;
      readonly task: string | undefined;
      readonly dryRun: boolean;
      readonly ratePerSecond: number | undefined;
      readonly json: boolean;
      readonly app: AppRef;
    };

const OPTIONS = {
  ...APP_OPTIONS,
  source: { type: "string" },
  task: { type: "string" },
  status: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
  search: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  "dry-run": { type: "boolean" },
  rate: { type: "string" },
  json: { type: "boolean" },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]["type"] extends "boolean" ? boolean : string };

/**
 * `events list [filters] [--limit N] [--cursor C] <app>`, `events show <id> <app>`,
 * `events replay <id> [--task T] <app>`, `events replay <filters> [--task T] [--dry-run] [--rate N] <app>`.
 * Every flag value is checked here: a bad one is a UsageError naming it, before any store is opened.
 */
export function parseEventsArgs(args: readonly string[], now: number = Date.now()): EventsRequest {
  const { values, positionals } = parseCommandArgs("events", args, OPTIONS) as { values: Values; positionals: string[] };
  const [action, ...rest] = positionals;
  if (action === undefined) throw new UsageError(`events needs an action: ${ACTIONS.join(", ")}`);
  if (!ACTIONS.includes(action as Action)) {
    const guess = didYouMean(action, ACTIONS);
    throw new UsageError(`unknown events action "${action}"${guess ? ` (did you mean "${guess}"?)` : ""}; one of: ${ACTIONS.join(", ")}`);
  }
  const json = values.json === true;
  const given = (names: readonly string[]) => names.filter((name) => values[name as keyof Values] !== undefined).map((name) => `--${name}`);

  if (action === "list") {
    refuse(given(["dry-run", "rate"]), "list");
    const app = appOf(values, rest, 0, `events list [--source S] [--task T] [--status S] [--since T] [--until T] [--search Q] [--limit N] [--cursor C] ${APP_USAGE}`);
    const query: HistoryQuery = {
      ...filterOf(values, now),
      ...(values.limit === undefined ? {} : { limit: integerFlag("limit", values.limit, 1, MAX_LIST_LIMIT) }),
      ...(values.cursor === undefined ? {} : { cursor: cursorFlag(values.cursor) }),
    };
    return { action, query, json, app };
  }

  if (action === "show") {
    refuse(given([...FILTER_FLAGS, "limit", "cursor", "dry-run", "rate"]), "show");
    const app = appOf(values, rest, 1, `events show <id> ${APP_USAGE}`);
    return { action, id: nonEmpty("id", rest[0]), json, app };
  }

  refuse(given(["limit", "cursor"]), "replay");
  const filters = given(FILTER_FLAGS.filter((f) => f !== "task"));
  // One positional more than the app's: an event id. Else a filter, which must say something.
  const byId = values.module !== undefined || values.store !== undefined ? rest.length === 1 : rest.length === 2;
  if (byId) {
    if (filters.length > 0) throw new UsageError(`events replay: give an event id or a filter (${filters.join(", ")}), not both`);
    refuse(given(["dry-run", "rate"]), "replay of one event");
    const app = appOf(values, rest, 1, `events replay <id> [--task T] ${APP_USAGE}`);
    return { action: "replay", id: nonEmpty("id", rest[0]), task: values.task, json, app };
  }
  const app = appOf(values, rest, 0, `events replay <id | --status S --since T ...> [--task T] [--dry-run] [--rate N] ${APP_USAGE}`);
  if (filters.length === 0) {
    throw new UsageError("events replay needs an event id, or a filter of the events to replay (--status, --since, --until, --source, --search; --task alone would replay every event of the task)");
  }
  const ratePerSecond = values.rate === undefined ? undefined : positiveNumber("rate", values.rate);
  return { action: "bulk-replay", filter: filterOf(values, now), task: values.task, dryRun: values["dry-run"] === true, ratePerSecond, json, app };
}

/** The list filter of the flags (each checked). */
function filterOf(values: Values, now: number): ReplayFilter {
  const since = values.since === undefined ? undefined : parseTimeFlag("since", values.since, now);
  const until = values.until === undefined ? undefined : parseTimeFlag("until", values.until, now);
  if (since !== undefined && until !== undefined && since >= until) {
    throw new UsageError(`--since ${values.since} is not before --until ${values.until}: no event can match`);
  }
  return {
    ...(values.source === undefined ? {} : { source: nonEmpty("source", values.source) }),
    ...(values.task === undefined ? {} : { task: nonEmpty("task", values.task) }),
    ...(values.status === undefined ? {} : { status: statusFlag(values.status) }),
    ...(since === undefined ? {} : { since }),
    ...(until === undefined ? {} : { until }),
    ...(values.search === undefined ? {} : { search: nonEmpty("search", values.search) }),
  };
}

function appOf(values: Values, rest: readonly string[], expected: number, usage: string): AppRef {
  const parsed = appRefOf(values, rest, expected);
  if (parsed === undefined) throw new UsageError(`usage: ${usage}`);
  return parsed.app;
}

function refuse(flags: readonly string[], action: string): void {
  if (flags.length > 0) throw new UsageError(`${flags.join(", ")} ${flags.length === 1 ? "does" : "do"} not apply to events ${action}`);
}

function statusFlag(value: string): EventStatus {
  if (!EVENT_STATUSES.includes(value as EventStatus)) throw new UsageError(`--status ${JSON.stringify(value)}: one of ${EVENT_STATUSES.join(", ")}`);
  return value as EventStatus;
}

function integerFlag(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${flag} ${JSON.stringify(value)}: a whole number from ${min} to ${max}`);
  return n;
}

function positiveNumber(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new UsageError(`--${flag} ${JSON.stringify(value)}: a number above 0 (events a second)`);
  return n;
}

/** Every engine's cursor has the one form history-query.ts gives it: a typo is caught before any store is opened. */
function cursorFlag(value: string): string {
  try {
    decodeCursor(nonEmpty("cursor", value));
  } catch (error) {
    if (error instanceof HistoryQueryError) throw new UsageError(`--${error.message}`);
    throw error;
  }
  return value;
}

function nonEmpty(flag: string, value: string | undefined): string {
  if (value === undefined || value.trim() === "") throw new UsageError(`${flag === "id" ? "the event id" : `--${flag}`} must not be empty`);
  return value;
}
