import { didYouMean } from "../util/did-you-mean";

/** CoreApp's `history` option: how long events are kept, and how many at most. */
export interface HistoryOptions {
  /** Events received longer ago than this are pruned, in the background (default 7 days). */
  readonly retainMs?: number;
  /** Beyond this many events, the oldest are pruned (default: the memory store 10,000; the others no bound). */
  readonly maxEvents?: number;
}

export const DEFAULT_HISTORY_RETAIN_MS = 7 * 24 * 60 * 60 * 1000;

/** The `history` option resolved: off, or on with its retention. */
export type ResolvedHistory = { readonly on: false } | { readonly on: true; readonly retainMs: number; readonly maxEvents: number | undefined };

const KEYS = ["retainMs", "maxEvents"];

/** Checks the `history` option; throws a TypeError naming the key and what it takes. */
export function resolveHistoryOptions(option: HistoryOptions | boolean | undefined, where: string): ResolvedHistory {
  if (option === false) return { on: false };
  if (option === undefined || option === true) return { on: true, retainMs: DEFAULT_HISTORY_RETAIN_MS, maxEvents: undefined };
  if (typeof option !== "object" || option === null || Array.isArray(option)) {
    throw new TypeError(`${where}: history must be false (no history), true or { retainMs?, maxEvents? }, got ${typeof option === "object" ? JSON.stringify(option) : String(option)}`);
  }
  for (const key of Object.keys(option)) {
    if (!KEYS.includes(key)) {
      const guess = didYouMean(key, KEYS);
      throw new TypeError(`${where}: history.${key} is not an option${guess ? ` (did you mean "${guess}"?)` : ""}; it takes ${KEYS.join(" and ")}`);
    }
  }
  const { retainMs = DEFAULT_HISTORY_RETAIN_MS, maxEvents } = option;
  if (typeof retainMs !== "number" || !Number.isInteger(retainMs) || retainMs < 1) {
    throw new TypeError(`${where}: history.retainMs must be a whole number of milliseconds >= 1 (7 days: ${DEFAULT_HISTORY_RETAIN_MS}), got ${String(retainMs)}`);
  }
  if (maxEvents !== undefined && (typeof maxEvents !== "number" || !Number.isInteger(maxEvents) || maxEvents < 1)) {
    throw new TypeError(`${where}: history.maxEvents must be an integer >= 1, got ${String(maxEvents)}`);
  }
  return { on: true, retainMs, maxEvents };
}
