import type { StoreRefusal } from "../store";
import { toRefusal } from "../store-errors";

/**
 * Remembers that the store could not write (or open), so `admit` refuses at once instead of
 * letting requests in only to fail at commit. Cleared by the next write that succeeds.
 */
export class WriteHealth {
  private failure: StoreRefusal | undefined;

  constructor(private readonly onFailing: () => void) {}

  get refusal(): StoreRefusal | undefined {
    return this.failure;
  }

  failed(error: unknown): void {
    const first = this.failure === undefined;
    this.failure = toRefusal(error);
    if (first) this.onFailing();
  }

  succeeded(): void {
    this.failure = undefined;
  }
}
