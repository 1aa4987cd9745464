import type { StoreRefusal } from "../store";
import { StoreRefusedError } from "../store-errors";
import type { ThrottledLog } from "./throttled-log";

const UNAVAILABLE: StoreRefusal = { code: "store_unavailable", message: "the store cannot reach its database right now", retryAfterSeconds: 5 };

/**
 * Whether the database is reachable, as last seen. Set by any statement that failed for want of
 * the database, cleared only by the probe that reaches it again: `admit` then refuses at once
 * while it is down, instead of letting requests in to wait for a timeout each.
 */
export class PostgresHealth {
  private cause: Error | undefined;

  constructor(
    private readonly log: ThrottledLog,
    private readonly onFailing: () => void,
  ) {}

  get failure(): Error | undefined {
    return this.cause;
  }

  get refusal(): StoreRefusal | undefined {
    return this.cause ? UNAVAILABLE : undefined;
  }

  failed(error: unknown): void {
    const first = this.cause === undefined;
    this.cause = error instanceof Error ? error : new Error(String(error));
    this.log.failed("database", error, "the store cannot reach PostgreSQL: webhooks are answered 503 and tasks pause until it can");
    if (first) this.onFailing();
  }

  recovered(): void {
    if (this.cause === undefined) return;
    this.cause = undefined;
    this.log.recovered("database", "the store reaches PostgreSQL again");
  }

  /** The error to throw while failing, carrying the cause for logs. */
  error(): StoreRefusedError | undefined {
    return this.cause ? new StoreRefusedError(UNAVAILABLE, { cause: this.cause }) : undefined;
  }
}

/** A refusal for a failed write, keeping the driver's error as the cause. */
export function unavailableError(cause: unknown): StoreRefusedError {
  return cause instanceof StoreRefusedError ? cause : new StoreRefusedError(UNAVAILABLE, { cause });
}
