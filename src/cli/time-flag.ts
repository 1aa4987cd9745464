import { isCalendarDate } from "../util/calendar-date";
import { UsageError } from "./usage";

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const RELATIVE = /^(\d+(?:\.\d+)?)([smhdw])$/;
/** A date or a date and time, as ISO 8601 writes them (Date.parse reads more, and guesses). */
const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * A time flag's value in ms since the epoch: an ISO time (`2026-11-24T18:00:00Z`, `2026-11-24`)
 * or a span before `now` (`90s`, `30m`, `1h`, `2d`, `1w`). Throws a UsageError naming the flag.
 */
export function parseTimeFlag(flag: string, value: string, now: number = Date.now()): number {
  const relative = RELATIVE.exec(value.trim());
  if (relative !== null) return now - Number(relative[1]) * UNITS[relative[2]];
  if (ISO.test(value.trim()) && isCalendarDate(value.trim())) {
    const time = Date.parse(value.trim());
    if (Number.isFinite(time)) return time;
  }
  throw new UsageError(`--${flag} ${JSON.stringify(value)}: give an ISO time (2026-11-24T18:00:00Z, 2026-11-24) or a span before now (30m, 1h, 2d, 1w)`);
}
