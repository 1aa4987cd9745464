import type { StoreRefusal } from "../store";
import { StoreRefusedError, toRefusal } from "../store-errors";

/**
 * Remembers that the store could not write (or open), so `admit` refuses at once instead of
 * letting requests in only to fail at commit. Cleared by the next write that succeeds.
 */
export class WriteHealth {
  private failure: { readonly refusal: StoreRefusal; readonly cause: unknown } | undefined;

  constructor(private readonly onFailing: () => void) {}

  get refusal(): StoreRefusal | undefined {
    return this.failure?.refusal;
  }

  /** The engine's error behind the refusal, for logs (refusals go to senders and stay vague). */
  get cause(): unknown {
    return this.failure?.cause;
  }

  failed(cause: unknown): void {
    const first = this.failure === undefined;
    this.failure = { refusal: toRefusal(cause), cause };
    if (first) this.onFailing();
  }

  succeeded(): void {
    this.failure = undefined;
  }

  /** The error to throw while failing, carrying the cause for `storeFailureDetail`. */
  error(): StoreRefusedError | undefined {
    return this.failure ? new StoreRefusedError(this.failure.refusal, { cause: this.failure.cause }) : undefined;
  }
}
