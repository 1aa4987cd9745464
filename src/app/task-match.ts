import { isSource } from "../sources/source";
import { eventNameMatcher } from "../sources/webhook/event-names/event-pattern";

/** What `taskMatcher` reads of a task's options. */
export interface TaskMatchOptions {
  /** When given, checked to name its events (a queue's messages have no name). */
  readonly source?: unknown;
  readonly on?: string | readonly string[];
  readonly filter?: (event: never) => boolean;
}

/**
 * The predicate choosing the events a task takes, from its `on` (event names, see
 * event-pattern.ts) and its `filter`, both of which must accept; undefined when the task takes
 * every event. Throws a TypeError, prefixed by `where`, for an option it cannot use: an invalid
 * pattern, `on` on a source that does not name its events, a filter that is not a function.
 * A filter that throws is not caught here: whoever routes events decides what that means.
 */
export function taskMatcher(options: TaskMatchOptions, where: string): ((event: unknown) => boolean) | undefined {
  const { on, filter } = options;
  if (filter !== undefined && typeof filter !== "function") throw new TypeError(`${where}: filter must be a function (event) => boolean`);
  const byName = on === undefined ? undefined : nameMatcher(on, options, where);
  if (byName === undefined && filter === undefined) return undefined;
  const accepts = filter as ((event: unknown) => unknown) | undefined;
  // Only `true` accepts: a filter that forgets to return takes nothing rather than everything.
  return (event) => (byName === undefined || byName(nameOf(event))) && (accepts === undefined || accepts(event) === true);
}

function nameMatcher(on: unknown, options: TaskMatchOptions, where: string): (name: string | undefined) => boolean {
  const patterns = typeof on === "string" ? [on] : on;
  if (!Array.isArray(patterns) || patterns.length === 0) throw new TypeError(`${where}: on must be an event name or a non-empty list of them ("pull_request.opened", ["invoice.*", "charge.refunded"])`);
  const matches = eventNameMatcher(patterns as readonly string[], `${where}: on`);
  if ("source" in options && options.source !== undefined) {
    const source = options.source;
    if (!isSource(source)) throw new TypeError(`${where}: on selects events by the name their sender gives them, and queue messages have none; use filter to choose among them`);
    if (source.namesEvents !== true) {
      throw new TypeError(`${where}: on needs named events, and ${source.describe()} does not name its events: give it a sender's verifier as auth (GitHubSignature, StripeSignature, ...) or an eventName option`);
    }
  }
  return matches;
}

function nameOf(event: unknown): string | undefined {
  const name = typeof event === "object" && event !== null ? (event as { name?: unknown }).name : undefined;
  return typeof name === "string" ? name : undefined;
}
