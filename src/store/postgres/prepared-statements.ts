import { createHash } from "node:crypto";

/*
 * Named (prepared) statements for the writes that look nothing up: the INSERTs of new messages
 * and of the history's notes. PostgreSQL parses, analyses and plans an unnamed statement on
 * every call; a named one is parsed once per connection, and after five calls PostgreSQL keeps
 * a generic plan when it costs no more than the per-call ones. node-postgres prepares a name
 * on a connection the first time it is used there.
 *
 * A statement that finds rows of `messages` (a completion, a retry, a group's completion) is
 * not named. Its generic plan is made in the first seconds, while the table is nearly empty,
 * and then scans the whole table (Seq Scan) however large it has grown: under the bench's
 * load a completion took 4 ms to delete 15 rows from 2,500 (438 pages), most of the
 * database's time per webhook, where a plan made per call finds them by key in a few
 * hundredths of a millisecond and costs about as much to make.
 *
 * The claim is not named. Its generic plan with `LIMIT $2` is costed for a tenth of the table
 * and JIT-compiled on every call (100 times slower); with the limit written into the text it
 * ran well in EXPLAIN ANALYZE on a 100,000-message backlog, but under the bench's load its
 * execution took from 0.9x to 5x the time of a plan made per call, more than the planning saved.
 */

const names = new Map<string, string>();

/** A name for a statement text: the same text gets the same name on every connection, another text another name. */
export function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `wt_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * How many rows a multi-row statement is written for: the batch size rounded up to a power of
 * two (at least 4), so that a few statement texts serve every batch size; the rows past the
 * batch are all NULL and filtered out by the statement.
 */
export function rowBucket(rows: number): number {
  let n = 4;
  while (n < rows) n *= 2;
  return n;
}
