import type { StateSetOptions, StateStore } from "../store";
import { storedForm } from "../payload-codec";

export interface StateEntry {
  value: unknown;
  expiresAt: number;
}

/** Told of each entry added to a bounded map (the memory store's deduplication markers). */
export interface EntryBound {
  added(key: string, entry: StateEntry): void;
}

/** State held in a Map; entries with a time-to-live are dropped when read after expiry or swept. */
export class MemoryState implements StateStore {
  constructor(
    private readonly entries: Map<string, StateEntry>,
    private readonly prefix: string,
    private readonly bound?: EntryBound,
  ) {}

  /** A copy, as a durable engine reads one back: changing it changes nothing stored. */
  async get<V = unknown>(key: string): Promise<V | undefined> {
    const entry = this.live(this.prefix + key);
    return entry === undefined ? undefined : (storedForm(entry.value, "state") as V);
  }

  /** Kept in the stored form (payload-codec): what a test sees here is what production sees. */
  async set<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<void> {
    const stored = storedForm(value, "state");
    if (this.bound === undefined) {
      this.entries.set(this.prefix + key, { value: stored, expiresAt: expiry(options) });
      return;
    }
    // A live entry changed in place keeps its age (a reservation that becomes a marker); an expired one is new.
    const full = this.prefix + key;
    const entry = this.live(full);
    if (entry !== undefined) {
      entry.value = stored;
      entry.expiresAt = expiry(options);
    } else this.add(full, { value: stored, expiresAt: expiry(options) });
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
    this.add(full, { value: stored, expiresAt: expiry(options) });
    return true;
  }

  private add(fullKey: string, entry: StateEntry): void {
    this.entries.set(fullKey, entry);
    this.bound?.added(fullKey, entry);
  }

  private live(fullKey: string): StateEntry | undefined {
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
export function sweepExpired(entries: Map<string, StateEntry>, now = Date.now()): void {
  for (const [key, entry] of entries) if (entry.expiresAt <= now) entries.delete(key);
}
