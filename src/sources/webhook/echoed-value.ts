/** At most this many characters of a sender's value are repeated back in an error message. */
const MAX_ECHO = 40;

/**
 * A value from a request header, fit to quote in an error answer: printable ASCII only (so
 * nothing can forge a line of a log that prints the message), and cut to a few dozen characters.
 */
export function echoed(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, "?");
  return JSON.stringify(printable.length > MAX_ECHO ? `${printable.slice(0, MAX_ECHO)}…` : printable);
}
