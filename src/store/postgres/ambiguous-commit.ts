import { StoreRefusedError } from "../store-errors";
import type { EncodedMessage } from "./message-rows";
import type { MessageSql } from "./message-sql";
import { serverCode } from "./postgres-errors";
import type { PostgresQueryResult } from "./postgres-options";

/** Failures of getting a connection at all: the statement was never sent. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

/**
 * Whether a failed statement may have committed all the same: the connection broke (or the
 * driver gave up waiting) after the statement was sent, so its reply, not its work, may be
 * what was lost. A server's own error (it carries a SQLSTATE) means it did not commit, and a
 * connection that was never made sent nothing.
 */
export function mayHaveCommitted(error: unknown): boolean {
  const cause = error instanceof StoreRefusedError && error.cause !== undefined ? error.cause : error;
  if (serverCode(cause) !== undefined) return false;
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code === "string" && NOT_SENT.has(code)) return false;
  return !(cause instanceof Error && /trying to connect|connection timeout/i.test(cause.message));
}

/**
 * After an INSERT of `rows` whose outcome is unknown, asks the database (on another
 * connection) whether they are there: one statement, so all or none. True when they are (the
 * commit happened and only its reply was lost), false when they are not; throws when the
 * database cannot tell (then nobody knows: the caller reports the original failure).
 */
export async function committedAnyway(
  rows: readonly EncodedMessage[],
  sql: MessageSql,
  query: (text: string, values: unknown[]) => Promise<PostgresQueryResult>,
): Promise<boolean> {
  const queues = rows.map((r) => r.values[0] as string);
  const ids = rows.map((r) => r.values[1] as string);
  const { rows: found } = await query(sql.present(), [queues, ids]);
  return Number(found[0].n) >= rows.length;
}
