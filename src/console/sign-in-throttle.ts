/**
 * Wrong tokens and passwords, counted per client address: past `limit` in `windowMs`, the
 * client is answered 429 until the window ends, so that guessing over HTTP stays hopeless even
 * for a short secret. Counts only credentials that were given and wrong (a typed token, a
 * Bearer or basic header), never a request without any, nor an expired session.
 */
export class SignInThrottle {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly limit = 10,
    private readonly windowMs = 60_000,
    /** The map never grows past this many addresses (the oldest entries go first). */
    private readonly maxClients = 10_000,
  ) {}

  /** Seconds `client` must wait before trying again, or undefined when it may try now. */
  retryAfter(client: string, now = Date.now()): number | undefined {
    const entry = this.failures.get(client);
    if (entry === undefined) return undefined;
    if (now - entry.since >= this.windowMs) {
      this.failures.delete(client);
      return undefined;
    }
    return entry.count >= this.limit ? Math.ceil((entry.since + this.windowMs - now) / 1000) : undefined;
  }

  failed(client: string, now = Date.now()): void {
    const entry = this.failures.get(client);
    if (entry !== undefined && now - entry.since < this.windowMs) {
      entry.count++;
      return;
    }
    this.failures.delete(client);
    if (this.failures.size >= this.maxClients) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(client, { count: 1, since: now });
  }
}
