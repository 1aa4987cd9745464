/**
 * Patterns of event names, as a task's `on` gives them. Names are made of segments separated
 * by "." or "/" ("pull_request.opened", "checkout.session.completed", "orders/create"), which
 * are the same in a pattern ("orders.create" matches "orders/create"):
 * - a name matches itself and every name below it: "pull_request" matches "pull_request.opened";
 * - "*" stands for one segment ("*.messages"), and at the end for one or more ("invoice.*",
 *   "customer.*" matching "customer.subscription.created");
 * - "*" alone matches every name (but not an event without one).
 */

const MAX_PATTERN_LENGTH = 200;
const SEGMENT = /^[^\s*./]+$/;

/** Why `pattern` is not a valid pattern, or undefined when it is. */
export function eventPatternProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== "string" || pattern.length === 0) return "an event name must be a non-empty string";
  if (pattern.length > MAX_PATTERN_LENGTH) return `an event name is at most ${MAX_PATTERN_LENGTH} characters`;
  if (pattern === "*") return undefined;
  // Slack names slash commands by the command itself ("/deploy"): one leading "/" is allowed.
  const segments = pattern.replace(/^\//, "").split(/[./]/);
  for (const segment of segments) {
    if (segment === "*") continue;
    if (segment.includes("*")) return `"${pattern}": "*" stands for a whole segment ("invoice.*", not "invoice*")`;
    if (!SEGMENT.test(segment)) return `"${pattern}": an event name is segments separated by "." or "/", without spaces or empty segments`;
  }
  return undefined;
}

/** One pattern as a regular expression over whole names. */
function compile(pattern: string): RegExp {
  if (pattern === "*") return /^.+$/s;
  const parts = pattern.split(/([./])/);
  const last = parts.length - 1;
  const source = parts
    .map((part, i) => {
      // Either separator stands for both: "orders.create" is the segments of "orders/create".
      if (part === "." || part === "/") return "[./]";
      if (part !== "*") return part.replace(/[\\^$.*+?()[\]{}|-]/g, "\\$&");
      return i === last ? "[^./]+(?:[./][^./]+)*" : "[^./]+";
    })
    .join("");
  const below = parts[last] === "*" ? "" : "(?:[./].+)?";
  return new RegExp(`^${source}${below}$`, "s");
}

/**
 * A predicate telling whether a name matches any of `patterns`; throws a TypeError naming the
 * first invalid pattern (prefixed by `where`).
 */
export function eventNameMatcher(patterns: readonly string[], where: string): (name: string | undefined) => boolean {
  for (const pattern of patterns) {
    const problem = eventPatternProblem(pattern);
    if (problem !== undefined) throw new TypeError(`${where}: ${problem}`);
  }
  const compiled = patterns.map(compile);
  return (name) => typeof name === "string" && compiled.some((pattern) => pattern.test(name));
}
