/** One step of a key path: a mapping key or a list index. */
export type KeySegment = string | number;

const SIMPLE_KEY = /^[A-Za-z_$][\w$-]*$/;

/**
 * Formats a key path as users read it: `resources.github.port`, `tasks[0].handler.ref`,
 * `resources["my hook"].path` for keys that are not identifiers.
 */
export function formatKeyPath(segments: readonly KeySegment[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (SIMPLE_KEY.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** The path one level up, or undefined at the root. */
export function parentKeyPath(segments: readonly KeySegment[]): KeySegment[] | undefined {
  return segments.length === 0 ? undefined : segments.slice(0, -1);
}
