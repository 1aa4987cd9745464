import type { ConfigIssue } from "./config-error";
import { formatKeyPath, type KeySegment } from "./key-path";

/** Finds the line of a key path in the file (the line of the key itself). */
export type LineLookup = (segments: readonly KeySegment[]) => number | undefined;

/**
 * Collects the problems of one file. A problem at a path that is not in the file (a missing
 * key) takes the line of the nearest enclosing key that is.
 */
export class IssueList {
  readonly items: ConfigIssue[] = [];
  /** Values whose ${VARIABLE} could not be substituted: what a later check says of them follows from that, and is left out. */
  private readonly unsubstituted = new Set<string>();

  constructor(private readonly lineOf: LineLookup = () => undefined) {}

  /** A value whose ${VARIABLE} could not be substituted: its issue, and no other at its path. */
  addUnsubstituted(segments: readonly KeySegment[], message: string): void {
    this.unsubstituted.add(formatKeyPath(segments));
    this.record(segments, message);
  }

  add(segments: readonly KeySegment[], message: string): void {
    if (!this.unsubstituted.has(formatKeyPath(segments))) this.record(segments, message);
  }

  /** A key the section does not have: about the key, not its value, so kept even when the value had a substitution issue. */
  addUnknownKey(segments: readonly KeySegment[], message: string): void {
    this.record(segments, message);
  }

  private record(segments: readonly KeySegment[], message: string): void {
    let line: number | undefined;
    for (let n = segments.length; n >= 0 && line === undefined; n--) line = this.lineOf(segments.slice(0, n));
    this.items.push({ path: formatKeyPath(segments), message, ...(line === undefined ? {} : { line }) });
  }

  push(issue: ConfigIssue): void {
    this.items.push(issue);
  }

  get empty(): boolean {
    return this.items.length === 0;
  }
}
