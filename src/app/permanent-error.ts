/**
 * Thrown by a handler to say that retrying cannot help (a malformed event, a refused
 * operation): the event goes to the dead letters at once, without retries.
 *
 *   throw new PermanentError("unknown customer", { cause: error });
 */
export class PermanentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "PermanentError";
  }
}
