/**
 * The embedded store could not open its directory when first asked to (a path that names a
 * file, no permission, a directory lmdb cannot use): start() fails with this one line rather
 * than an app that logs "started" and answers every webhook 503. A directory lost later, while
 * the app runs, is another matter: the store refuses work and reopens it by itself.
 */
export class StoreOpenError extends Error {
  readonly code = "store_cannot_open";

  constructor(
    readonly dir: string,
    cause: unknown,
  ) {
    const detail = (cause instanceof Error ? cause.message : String(cause)).split("\n")[0];
    super(`cannot open the embedded store in ${dir}: ${detail}`, { cause });
    this.name = "StoreOpenError";
  }
}
