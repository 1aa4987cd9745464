import { isBlockedKey, isDelayedKey, isReadyKey } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import type { QueueTracker } from "./queue-tracker";

interface QueueSpan {
  readonly queue: string;
  readonly firstSeq: number;
  readonly lastSeq: number;
}

/**
 * Rebuilds the in-memory counters from the disk at open: per queue, the highest sequence
 * number (new messages go after it, so FIFO order holds across restarts) and how many
 * messages wait. Claims are not stored, so everything unfinished is visible again.
 *
 * Counting a queue walks its keys, which maps every page of it into memory; so the queue
 * with the widest span of sequence numbers (the backlog, if there is one) is not walked but
 * counted as the database's entry count minus the other queues. Opening a store with a
 * million waiting messages then takes a few seeks instead of reading a gigabyte.
 */
export function recoverQueues(dbs: EmbeddedDbs, tracker: QueueTracker): void {
  const spans = readySpans(dbs);
  if (spans.length > 0) {
    const widest = spans.reduce((a, b) => (b.lastSeq - b.firstSeq > a.lastSeq - a.firstSeq ? b : a));
    let others = 0;
    for (const span of spans) {
      if (span === widest) continue;
      const count = dbs.ready.getKeysCount({ start: [span.queue], end: [span.queue, Infinity] });
      others += count;
      tracker.recovered(span.queue, span.lastSeq, count);
    }
    tracker.recovered(widest.queue, widest.lastSeq, Math.max(0, entryCount(dbs) - others));
  }
  // Retries are few (each waits for its backoff): one pass over all of them.
  for (const key of dbs.delayed.getKeys()) {
    if (isDelayedKey(key)) tracker.recovered(key[0], key[2], 1);
  }
  // Messages held back behind their ordering key's head: counted, and new messages get later
  // sequence numbers than theirs (a key's line is ordered by them). One pass over their keys.
  for (const key of dbs.blocked.getKeys()) {
    if (isBlockedKey(key)) tracker.recovered(key[0], key[2], 1);
  }
}

/** First and last sequence number of each queue: two seeks per queue. */
function readySpans(dbs: EmbeddedDbs): QueueSpan[] {
  const spans: QueueSpan[] = [];
  let start: [string, number] | undefined;
  for (;;) {
    const first = firstKey(dbs.ready.getKeys(start ? { start, limit: 1 } : { limit: 1 }));
    if (first === undefined) return spans;
    if (!isReadyKey(first)) throw new Error(`unexpected key in the ready database: ${JSON.stringify(first)}`);
    const queue = first[0];
    const last = firstKey(dbs.ready.getKeys({ start: [queue, Infinity], end: [queue], reverse: true, limit: 1 }));
    spans.push({ queue, firstSeq: first[1], lastSeq: isReadyKey(last) ? last[1] : first[1] });
    // Infinity sorts after every sequence number: the next key found belongs to the next queue.
    start = [queue, Infinity];
  }
}

function entryCount(dbs: EmbeddedDbs): number {
  const stats = dbs.ready.getStats() as { entryCount?: unknown };
  if (typeof stats.entryCount !== "number") throw new Error("lmdb did not report the entry count of the ready database");
  return stats.entryCount;
}

function firstKey<K>(keys: Iterable<K>): K | undefined {
  for (const key of keys) return key;
  return undefined;
}
