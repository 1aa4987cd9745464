import type { QueueStats } from "../store";
import type { JournalLane } from "./journal/journal-lane";
import type { EmbeddedDbs } from "./lmdb-env";
import type { QueueTracker } from "./queue-tracker";

/** Most retries read to find the oldest: retries are few, but a scrape must stay cheap. */
const MAX_DELAYED_READ = 10_000;

/**
 * A queue's figures from what the store keeps: counts from the tracker (no scan), the oldest
 * message from the first waiting one of the B-tree, the journal's and the retries, and the
 * dead letters by a pass over them (few by nature). A claimed message is still at its place
 * (claims are not written), so it counts toward the oldest.
 */
export function embeddedQueueStats(dbs: EmbeddedDbs, tracker: QueueTracker, lane: JournalLane | undefined, queue: string, peekedOldest?: number): QueueStats {
  const inFlight = tracker.claimedCount(queue);
  const waiting = Math.max(0, tracker.count(queue) - inFlight);
  let oldest = lane?.oldestEnqueuedAt(queue) ?? peekedOldest ?? Infinity;
  for (const { value } of dbs.ready.getRange({ start: [queue, 0], end: [queue, Infinity], limit: 1 })) oldest = Math.min(oldest, value.enqueuedAt);
  const now = Date.now();
  let delayed = 0;
  for (const { key, value } of dbs.delayed.getRange({ start: [queue], end: [queue, Infinity], limit: MAX_DELAYED_READ })) {
    oldest = Math.min(oldest, value.enqueuedAt);
    if (key[1] > now) delayed++;
  }
  let deadLetters = 0;
  for (const { value } of dbs.dead.getRange()) if (value.queue === queue) deadLetters++;
  return { waiting, inFlight, oldestEnqueuedAt: oldest === Infinity ? undefined : oldest, deadLetters, delayed };
}
