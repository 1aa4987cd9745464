/**
 * Whether an error of node-postgres means "the database cannot be reached or cannot work right
 * now" (the store then refuses new work until it can) rather than a problem with one statement.
 * Network errors and pg's own timeouts carry no SQLSTATE; the server's own say so by class:
 * 08 connection exception, 53 insufficient resources, 57 operator intervention (shutdown,
 * statement timeout), 58 system error, and 25006 (a read-only standby after a failover).
 */
export function isUnavailable(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return ["08", "53", "57", "58"].includes(code.slice(0, 2)) || code === "25006";
}

/** Whether an error at open is the operator's to fix (bad password, no such database, no permission): reported, not retried. */
export function isConfigurationError(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && (code.startsWith("28") || code === "3D000" || code === "42501");
}
