import { entryCount, type HistoryDbs } from "./history-env";
import { activityBucket } from "./apply-notes";
import { type ActivityKey, type EarlyKey, type TimelineKey } from "./history-records";

/** Events removed per transaction: a prune never holds the history's write lock for long. */
export const PRUNE_BATCH = 500;

/**
 * Removes events received before `before`, then the oldest beyond `maxEvents`, oldest first,
 * `PRUNE_BATCH` per transaction; then the activity counters and early runs older than `before`.
 */
export async function pruneHistory(dbs: HistoryDbs, before: number, maxEvents: number | undefined): Promise<number> {
  let removed = 0;
  for (;;) {
    const n = await dbs.root.transaction(() => removeOldest(dbs, PRUNE_BATCH, before));
    removed += n;
    if (n < PRUNE_BATCH) break;
  }
  if (maxEvents !== undefined) {
    for (;;) {
      const excess = entryCount(dbs) - maxEvents;
      if (excess <= 0) break;
      const n = await dbs.root.transaction(() => removeOldest(dbs, Math.min(excess, PRUNE_BATCH)));
      removed += n;
      if (n === 0) break;
    }
  }
  await removeOlderCounts(dbs, before);
  return removed;
}

function removeOldest(dbs: HistoryDbs, count: number, before?: number): number {
  const gone: TimelineKey[] = [...dbs.timeline.getKeys(before === undefined ? { limit: count } : { end: [before], limit: count })];
  // Links to it from its parent or original stay; reads leave out events no longer kept.
  for (const key of gone) {
    dbs.timeline.remove(key);
    dbs.index.remove(key[1]);
  }
  return gone.length;
}

/** Counters of minutes wholly before `before`, and early runs that started before it (their event never came). */
async function removeOlderCounts(dbs: HistoryDbs, before: number): Promise<void> {
  const cut = activityBucket(before);
  for (;;) {
    const n = await dbs.root.transaction(() => {
      const keys: ActivityKey[] = [...dbs.activity.getKeys({ end: [cut], limit: PRUNE_BATCH })];
      for (const key of keys) dbs.activity.remove(key);
      return keys.length;
    });
    if (n < PRUNE_BATCH) break;
  }
  await dbs.root.transaction(() => {
    for (const { key, value } of [...dbs.early.getRange({ limit: 100 * PRUNE_BATCH })]) if (value[0][2] < before) dbs.early.remove(key as EarlyKey);
  });
}
