import type { StateSetOptions, StateStore } from "../store";
import { storedForm } from "../payload-codec";

interface Entry {
  value: unknown;
  expiresAt: number;
}

/** State held in a Map; entries with a time-to-live are dropped when read after expiry or swept. */
export class MemoryState implements StateStore {
  constructor(
    private readonly entries: Map<string, Entry>,
    private readonly prefix: string,
  ) {}

  /** A copy, as a durable engine reads one back: changing it changes nothing stored. */
  async get<V = unknown>(key: string): Promise<V | undefined> {
    const entry = this.live(this.prefix + key);
    return entry === undefined ? undefined : (storedForm(entry.value, "state") as V);
  }

  /** Kept in the stored form (payload-codec): what a test sees here is what production sees. */
  async set<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<void> {
    this.entries.set(this.prefix + key, { value: storedForm(value, "state"), expiresAt: expiry(options) });
  }

  /** True when a live value was there; an expired one counts as absent, as for `get`. */
  async delete(key: string): Promise<boolean> {
    const existed = this.live(this.prefix + key) !== undefined;
    this.entries.delete(this.prefix + key);
    return existed;
  }

  async setIfAbsent<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<boolean> {
    const full = this.prefix + key;
    const stored = storedForm(value, "state");
    if (this.live(full)) return false;
    this.entries.set(full, { value: stored, expiresAt: expiry(options) });
    return true;
  }

  private live(fullKey: string): Entry | undefined {
    const entry = this.entries.get(fullKey);
    if (entry && entry.expiresAt <= Date.now()) {
      this.entries.delete(fullKey);
      return undefined;
    }
    return entry;
  }
}

function expiry(options: StateSetOptions | undefined): number {
  return options?.ttlMs === undefined ? Infinity : Date.now() + options.ttlMs;
}

/** Removes expired entries so markers with a TTL do not pile up when nobody reads them. */
export function sweepExpired(entries: Map<string, Entry>, now = Date.now()): void {
  for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
}
