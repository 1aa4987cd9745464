/**
 * Whether an error of node-postgres means "the database cannot be reached or cannot work right
 * now" (the store then refuses new work until it can) rather than a problem with one statement.
 * Errors from the server carry a severity and a SQLSTATE, and say so by class: 08 connection
 * exception, 28 the role refused (a password rotated, NOLOGIN: no new connection will work),
 * 53 insufficient resources, 57 operator intervention (shutdown), 58 system error, and 25006 (a
 * read-only standby after a failover). 57014 is left out: a statement cancelled (its
 * statement_timeout) fails that statement only. Anything else (a refused or broken socket, a
 * timeout of the driver) is the network's.
 */
export function isUnavailable(error: unknown): boolean {
  const code = serverCode(error);
  if (code === undefined) return true;
  if (code === "57014") return false;
  return ["08", "28", "53", "57", "58"].includes(code.slice(0, 2)) || code === "25006";
}

/** Whether an error at open is the operator's to fix (bad password, no such database, no permission): reported, not retried. */
export function isConfigurationError(error: unknown): boolean {
  const code = serverCode(error);
  return code !== undefined && (code.startsWith("28") || code === "3D000" || code === "42501");
}

/** Whether a write failed for want of room on the database's disk (53100), the error or its cause. */
export function isDiskFull(error: unknown): boolean {
  const cause = error instanceof Error && serverCode(error) === undefined ? error.cause : error;
  return serverCode(cause) === "53100";
}

/** The SQLSTATE of an error the server sent (node-postgres `DatabaseError`), else undefined. */
export function serverCode(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof severity === "string" && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}
