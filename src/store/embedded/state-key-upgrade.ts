import type { Database } from "lmdb";
import { stateKey, type ExpiryKey, type StateKey } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import type { StateRecord } from "./records";

/** Set in `meta` once the state keys of this directory are as stateKey makes them. */
const DONE = "stateKeysHashed";

/**
 * State keys of 64+ characters holding U+0000-U+0004 were once stored as they are (stateKey
 * hashes them now): a read by today's key missed such an entry, so a deduplication marker no
 * longer refused its repeat, and its index key in `expiry`, which reads back cut apart, was
 * never swept. Once per directory, such entries move to their hashed key and the index keys
 * that read back cut apart go. Returns how many entries moved.
 */
export function hashCutStateKeys(dbs: EmbeddedDbs): number {
  if (dbs.meta.get(DONE) !== undefined) return 0;
  const stateBytes = dbs.root.openDB<StateRecord, Buffer>({ name: "state", keyEncoding: "binary" });
  const expiryBytes = dbs.root.openDB<true, Buffer>({ name: "expiry", keyEncoding: "binary" });
  return dbs.root.transactionSync(() => {
    let moved = 0;
    for (const { key, raw } of cutKeys(dbs.state, stateBytes, 2)) {
      const former = formerKey(key, raw, 0) as StateKey | undefined;
      const record = former && dbs.state.get(former);
      if (former === undefined || record === undefined) continue;
      const now = stateKey(former[0], former[1]);
      void dbs.state.put(now, record);
      if (record.e !== undefined) void dbs.expiry.put([record.e, now[0], now[1]], true);
      void dbs.state.remove(former);
      moved++;
    }
    for (const { key, raw } of cutKeys(dbs.expiry, expiryBytes, 3)) {
      const former = formerKey(key, raw, 1) as ExpiryKey | undefined;
      if (former !== undefined && dbs.expiry.doesExist(former)) void dbs.expiry.remove(former);
    }
    void dbs.meta.put(DONE, Date.now());
    return moved;
  });
}

interface CutKey {
  readonly key: unknown[];
  readonly raw: Buffer;
}

/**
 * Keys of `db` that do not decode to the `parts` their writers gave them, each with its bytes
 * (read in step from a view of the same database with binary keys).
 */
function cutKeys<K extends StateKey | ExpiryKey>(db: Database<unknown, K>, bytes: Database<unknown, Buffer>, parts: number): CutKey[] {
  const cut: CutKey[] = [];
  const raws = bytes.getKeys()[Symbol.iterator]();
  for (const key of db.getKeys()) {
    const raw = raws.next();
    if (raw.done === true) break;
    const decoded = key as unknown[];
    if (decoded.length !== parts) cut.push({ key: decoded, raw: Buffer.from(raw.value) });
  }
  return cut;
}

/**
 * The key as it was written: its parts before the namespace (at `at`) read back whole, and the
 * last part is every byte after the namespace and its zero separator (lmdb leaves a string of
 * 64+ characters unescaped). Undefined when the bytes do not hold the namespace so.
 */
function formerKey(key: unknown[], raw: Buffer, at: number): unknown[] | undefined {
  const namespace = key[at];
  if (typeof namespace !== "string") return undefined;
  const marker = Buffer.concat([Buffer.from(namespace, "utf8"), Buffer.from([0])]);
  const start = raw.indexOf(marker, at === 0 ? 0 : 1);
  if (start < 0 || (at === 0 && start !== 0)) return undefined;
  return [...key.slice(0, at + 1), raw.subarray(start + marker.length).toString("utf8")];
}
