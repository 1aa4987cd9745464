import type { StateSetOptions, StateStore } from "../store";
import { stateKey, type ExpiryKey } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import { isLive, stateRecord, type StateRecord } from "./records";
import type { StoreWriter } from "./store-writer";

/** What the state needs from its store; `use` throws (StoreRefusedError) while the store is not open. */
export interface StateHost {
  use(): { readonly dbs: EmbeddedDbs; readonly writer: StoreWriter };
}

/**
 * Task state on disk. An entry with a time-to-live also gets a key in the expiry index, so
 * the sweep finds expired entries without reading the others; until swept, an expired entry
 * is ignored on read.
 */
export class EmbeddedState implements StateStore {
  constructor(
    private readonly host: StateHost,
    private readonly namespace: string,
  ) {}

  async get<V = unknown>(key: string): Promise<V | undefined> {
    const record = this.host.use().dbs.state.get(stateKey(this.namespace, key));
    return isLive(record, Date.now()) ? (record.v as V) : undefined;
  }

  async set<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<void> {
    const { dbs, writer } = this.host.use();
    const { state, expiry } = dbs;
    const full = stateKey(this.namespace, key);
    const expiresAt = expiryOf(options);
    const record = stateRecord(value, expiresAt);
    if (expiresAt === undefined) {
      await writer.run(() => state.put(full, record));
      return;
    }
    // The index key may outlive a later overwrite; the sweep checks the entry's own expiry.
    await writer.run(() =>
      state.batch(() => {
        void state.put(full, record);
        void expiry.put([expiresAt, full[0], full[1]], true);
      }),
    );
  }

  async delete(key: string): Promise<boolean> {
    const { dbs, writer } = this.host.use();
    const { state } = dbs;
    const full = stateKey(this.namespace, key);
    return writer.run(() =>
      state.transaction(() => {
        const existed = isLive(state.get(full), Date.now());
        void state.remove(full);
        return existed;
      }),
    );
  }

  /** Read and write in one write transaction: lmdb serialises those, across processes too. */
  async setIfAbsent<V = unknown>(key: string, value: V, options?: StateSetOptions): Promise<boolean> {
    const { dbs, writer } = this.host.use();
    const { state, expiry } = dbs;
    const full = stateKey(this.namespace, key);
    const expiresAt = expiryOf(options);
    // Made first: a value that cannot be stored is refused before any transaction starts.
    const record = stateRecord(value, expiresAt);
    return writer.run(() =>
      state.transaction(() => {
        if (isLive(state.get(full), Date.now())) return false;
        void state.put(full, record);
        if (expiresAt !== undefined) void expiry.put([expiresAt, full[0], full[1]], true);
        return true;
      }),
    );
  }
}

/** Removes expired entries (at most `limit` per transaction); returns how many were removed. */
export async function sweepExpiredState(host: StateHost, now = Date.now(), limit = 1_000): Promise<number> {
  let removed = 0;
  for (;;) {
    const { dbs, writer } = host.use();
    const { state, expiry } = dbs;
    const round = await writer.run(() =>
      expiry.transaction(() => {
        let seen = 0;
        let gone = 0;
        const due: ExpiryKey[] = [];
        for (const key of expiry.getKeys({ limit })) {
          if (key[0] > now) break;
          due.push(key);
        }
        for (const key of due) {
          const [expiresAt, namespace, name] = key;
          const record: StateRecord | undefined = state.get([namespace, name]);
          // Only when the entry still carries this expiry: it may have been set again since.
          if (record?.e === expiresAt) {
            void state.remove([namespace, name]);
            gone++;
          }
          void expiry.remove(key);
          seen++;
        }
        return { seen, gone };
      }),
    );
    removed += round.gone;
    if (round.seen < limit) return removed;
  }
}

function expiryOf(options: StateSetOptions | undefined): number | undefined {
  return options?.ttlMs === undefined ? undefined : Date.now() + options.ttlMs;
}
