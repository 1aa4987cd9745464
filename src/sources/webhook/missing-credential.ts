/**
 * The message for a secret or token that is undefined or empty. The usual cause is an
 * environment variable that is unset (`process.env.X!`) or set to nothing, so the message
 * says so: "must be a non-empty string" alone sends people looking at the wrong line.
 * Never quotes the value.
 */
export function missingCredentialMessage(owner: string, what: string, value: unknown): string {
  const expected = `${what} must be a non-empty string`;
  if (value === undefined || value === null) return `${owner}: ${what} is ${String(value)}: is the environment variable that should hold it unset? (${expected})`;
  if (value === "") return `${owner}: ${what} is empty: is the environment variable that should hold it set to nothing? (${expected})`;
  if (Array.isArray(value) && value.length === 0) return `${owner}: ${what} is an empty list (${expected}, or a non-empty list of them)`;
  return `${owner}: ${expected}, got ${typeof value}`;
}
