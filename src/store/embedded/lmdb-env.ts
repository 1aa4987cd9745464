import { mkdirSync } from "node:fs";
import { open, type Database, type RootDatabase } from "lmdb";
import type { DeadLetter } from "../store";
import { PAYLOAD_ENCODING } from "../payload-codec";
import type { BlockedKey, DelayedKey, ExpiryKey, HeadKey, ReadyKey, StateKey } from "./keys";
import type { MessageRecord, StateRecord } from "./records";
import { ProtoKeepingPackr } from "./proto-keeping-packr";

/**
 * Messages are plain MessagePack maps, as every engine writes payloads (payload-codec.ts):
 * measured here, plain maps encode in about half the time of msgpackr's records (4.5 µs
 * against 7-9 µs for a 300-byte webhook event) at the same size. Read with a `__proto__` key
 * kept as itself (ProtoKeepingPackr).
 */
const MESSAGE_ENCODING = { ...PAYLOAD_ENCODING, encoder: { Encoder: ProtoKeepingPackr } };

/** The lmdb environment of one store directory and its named databases. */
export interface EmbeddedDbs {
  readonly root: RootDatabase;
  readonly ready: Database<MessageRecord, ReadyKey>;
  readonly delayed: Database<MessageRecord, DelayedKey>;
  /** Ordering keys with a message in the queue (see key-lines.ts). */
  readonly heads: Database<true, HeadKey>;
  /** Messages held back behind the head of their ordering key. */
  readonly blocked: Database<MessageRecord, BlockedKey>;
  /** Dead letters by message id. */
  readonly dead: Database<DeadLetter, string>;
  readonly state: Database<StateRecord, StateKey>;
  readonly expiry: Database<true, ExpiryKey>;
  /** Small bookkeeping values (the health probe). */
  readonly meta: Database<number, string>;
  /** Paused tasks by name. */
  readonly paused: Database<true, string>;
}

/**
 * Opens (creating it when needed) the store in `dir`. Throws when the directory cannot be
 * created or opened.
 *
 * Durability: lmdb's defaults are kept on purpose; `noSync`, `noMetaSync`, `mapAsync` and
 * `separateFlushed` stay off. With them, the promise of a write resolves only after its
 * transaction is on disk: on Linux lmdb-js commits with "overlapping sync", where
 * mdb_txn_commit releases the write lock, then fdatasync()s the data file and writes the
 * meta page through an O_DSYNC descriptor, and only then returns, and only then is the
 * batch flagged committed to JS (checked with strace on lmdb 3.5: fdatasync and the O_DSYNC
 * meta write happen before the promise resolves). Writes issued during one event-loop turn
 * share one transaction and so one fsync: that is the group commit.
 */
export function openEnvironment(dir: string): EmbeddedDbs {
  mkdirSync(dir, { recursive: true });
  // noSubdir: lmdb takes a path whose last part has a dot ("shop.orders", mktemp's "tmp.1d0t3jQeCo")
  // for the data file itself unless told it is a directory.
  const root = open({ path: dir, maxDbs: 12, noSubdir: false });
  try {
    return {
      root,
      ready: root.openDB<MessageRecord, ReadyKey>({ name: "ready", ...MESSAGE_ENCODING }),
      delayed: root.openDB<MessageRecord, DelayedKey>({ name: "delayed", ...MESSAGE_ENCODING }),
      heads: root.openDB<true, HeadKey>({ name: "heads" }),
      blocked: root.openDB<MessageRecord, BlockedKey>({ name: "blocked", ...MESSAGE_ENCODING }),
      dead: root.openDB<DeadLetter, string>({ name: "dead", ...MESSAGE_ENCODING }),
      state: root.openDB<StateRecord, StateKey>({ name: "state" }),
      expiry: root.openDB<true, ExpiryKey>({ name: "expiry" }),
      meta: root.openDB<number, string>({ name: "meta" }),
      paused: root.openDB<true, string>({ name: "paused" }),
    };
  } catch (error) {
    void root.close();
    throw error;
  }
}

/** Every named database, for size accounting. */
export function allDatabases(dbs: EmbeddedDbs): Database[] {
  return [dbs.ready, dbs.delayed, dbs.heads, dbs.blocked, dbs.dead, dbs.state, dbs.expiry, dbs.meta, dbs.paused] as unknown as Database[];
}
