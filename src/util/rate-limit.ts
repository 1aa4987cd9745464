/**
 * At most one occurrence let through per `intervalMs`, counting those held back: for log lines
 * that a failure repeats once per request (a batch of 250 refused requests is one line, not 250).
 */
export class RateLimit {
  private lastAt = -Infinity;
  private heldBack = 0;

  constructor(private readonly intervalMs = 5_000) {}

  /** Undefined when held back; else how many were held back since the last one let through. */
  pass(): { readonly suppressed: number } | undefined {
    const now = Date.now();
    if (now - this.lastAt < this.intervalMs) {
      this.heldBack++;
      return undefined;
    }
    this.lastAt = now;
    const suppressed = this.heldBack;
    this.heldBack = 0;
    return { suppressed };
  }
}
