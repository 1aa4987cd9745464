/** How many signed-in browsers one console keeps at most; past it the oldest session ends. */
export const MAX_SESSIONS = 1_000;

/**
 * The console's live sessions, by their random id, with their expiry. A signed cookie is a
 * session only while its id is here: signing out removes it, so a copy of the cookie taken
 * before is refused. Kept in memory, bounded: expired ids go at each sign-in, and a full
 * registry ends its oldest session (a browser asked for the token again, never one let in).
 */
export class ConsoleSessions {
  private readonly live = new Map<string, number>();

  constructor(private readonly max = MAX_SESSIONS) {}

  add(nonce: string, expires: number, now: number): void {
    for (const [id, until] of this.live) if (until <= now) this.live.delete(id);
    // Map order is insertion order: the first key is the oldest sign-in.
    while (this.live.size >= this.max) this.live.delete(this.live.keys().next().value as string);
    this.live.set(nonce, expires);
  }

  has(nonce: string, now: number): boolean {
    const until = this.live.get(nonce);
    return until !== undefined && until > now;
  }

  end(nonce: string): void {
    this.live.delete(nonce);
  }

  get size(): number {
    return this.live.size;
  }
}
