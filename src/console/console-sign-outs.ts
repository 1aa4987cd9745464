import type { StateStore } from "../store/store";

/** The state namespace of the console's signed-out sessions in the app's store. */
export const CONSOLE_SIGN_OUTS = "webhook-tasks:console-sign-outs";

/** Signed-out sessions this process remembers without asking the store; past it the oldest is asked again. */
const MOST_REMEMBERED = 1_000;

/**
 * Sessions that signed out before their cookie expired. A session cookie is signed and carries
 * its expiry, so it holds across restarts and on every replica sharing the token; signing out
 * must then be known as widely: it is noted in the app's store (shared by the replicas of a
 * PostgreSQL app, kept across restarts by a durable one), for as long as the cookie would have
 * lasted. Without a store (a console built alone), this process remembers it.
 */
export class ConsoleSignOuts {
  /** Nonce → when its cookie expires anyway. */
  private readonly remembered = new Map<string, number>();

  constructor(private readonly state: StateStore | undefined) {}

  async end(nonce: string, expires: number, now = Date.now()): Promise<void> {
    this.remember(nonce, expires, now);
    await this.state?.set(nonce, expires, { ttlMs: Math.max(1, expires - now) });
  }

  /** Whether the session signed out: here, or on another replica, or before a restart. */
  async ended(nonce: string, now = Date.now()): Promise<boolean> {
    const until = this.remembered.get(nonce);
    if (until !== undefined && until > now) return true;
    const expires = await this.state?.get<number>(nonce);
    if (expires === undefined || expires <= now) return false;
    this.remember(nonce, expires, now);
    return true;
  }

  private remember(nonce: string, expires: number, now: number): void {
    for (const [id, until] of this.remembered) if (until <= now) this.remembered.delete(id);
    // Map order is insertion order: the first key is the oldest remembered.
    while (this.remembered.size >= MOST_REMEMBERED) this.remembered.delete(this.remembered.keys().next().value as string);
    this.remembered.set(nonce, expires);
  }
}
