import type { RootDatabase } from "lmdb";
import { StoreRefusedError, toRefusal } from "../store-errors";
import type { WriteHealth } from "./write-health";

const ignore = (): void => undefined;

/**
 * Every write of the embedded store goes through here: a failed commit (disk full, I/O
 * error) becomes a StoreRefusedError and marks the store unhealthy; a committed one marks it
 * healthy again.
 */
export class StoreWriter {
  private guardQueued = false;

  constructor(
    private readonly root: RootDatabase,
    private readonly health: WriteHealth,
  ) {}

  run<T>(write: () => Promise<T>): Promise<T> {
    let pending: Promise<T>;
    try {
      pending = write();
    } catch (error) {
      // A value msgpack cannot encode, a key too long: about this one call, not the disk,
      // so the store stays healthy.
      return Promise.reject(error);
    } finally {
      // After write(): the guard must be queued behind the batch start lmdb queued in there.
      this.guardBatchPromise();
    }
    // then() rather than async/await: this is on every request's path.
    return pending.then(
      (result) => {
        this.health.succeeded();
        return result;
      },
      (error: unknown) => this.failed(error),
    );
  }

  private async failed(error: unknown): Promise<never> {
    const cause = await commitFailureCause(error);
    if (cause === undefined) throw error;
    this.health.failed(cause);
    throw new StoreRefusedError(toRefusal(cause), { cause });
  }

  /**
   * lmdb-js (3.5) starts each event-turn batch with an internal write whose promise nobody
   * holds; when that transaction fails, the promise rejects unhandled and Node ends the
   * process. lmdb's batch-start callback is queued with setImmediate during the first write of
   * a turn; this immediate, queued right after it, attaches a handler to that promise (it is
   * what `committed` returns at that moment). Covered by the write-failure test.
   */
  private guardBatchPromise(): void {
    if (this.guardQueued) return;
    this.guardQueued = true;
    setImmediate(() => {
      this.guardQueued = false;
      this.root.committed.then(ignore, ignore);
    });
  }
}

/**
 * The real error behind a failed lmdb commit ("Commit failed (see commitError for details)"
 * carries it in a promise, which also has to be handled); undefined for any other error.
 */
async function commitFailureCause(error: unknown): Promise<unknown> {
  if (typeof error !== "object" || error === null || !("commitError" in error)) return undefined;
  const detail = (error as { commitError: unknown }).commitError;
  if (!isThenable(detail)) return error;
  try {
    await detail;
    return error;
  } catch (cause) {
    return cause;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}
