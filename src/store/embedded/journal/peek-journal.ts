import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { EmbeddedDbs } from "../lmdb-env";
import { decodeMessage } from "./journal-lane";
import { SEGMENT_FILE } from "./journal-log";
import { readSegment } from "./segment-reader";

/** A queue's messages in the journal (enqueued, no done-marker yet). */
export interface PeekedQueue {
  count: number;
  maxSeq: number;
  oldestEnqueuedAt: number;
}

/**
 * What the journal holds, read by a process that is not the consumer (the CLI): per queue,
 * the messages without a done-marker. Nothing is written, moved or quarantined: the consumer
 * may be running, or will fold the journal at its next open. A segment gone between listing
 * and reading (done, or folded) is skipped; a message also in the B-tree under its fold key (a
 * fold cut short) is counted once.
 */
export function peekJournal(dir: string, dbs: EmbeddedDbs): Map<string, PeekedQueue> {
  const queues = new Map<string, PeekedQueue>();
  if (!existsSync(dir)) return queues;
  const byEpoch = new Map<string, string[]>();
  for (const name of readdirSync(dir).filter((n) => SEGMENT_FILE.test(n)).sort()) {
    const epoch = SEGMENT_FILE.exec(name)![1]!;
    byEpoch.set(epoch, [...(byEpoch.get(epoch) ?? []), name]);
  }
  for (const [epoch, names] of byEpoch) {
    const open = new Map<number, { queue: string; seq: number; meta: Buffer; raw: Buffer | undefined }>();
    for (const name of names) {
      let file: Buffer;
      try {
        file = readFileSync(join(dir, name));
      } catch {
        continue;
      }
      for (const op of readSegment(file).ops) {
        if (op.kind === "done") open.delete(op.entryId);
        else open.set(op.entryId, op);
      }
    }
    for (const op of open.values()) {
      if (dbs.ready.doesExist([op.queue, op.seq, `j:${epoch}`])) continue;
      const enqueuedAt = decodeMessage(op.meta, op.raw).enqueuedAt;
      const queue = queues.get(op.queue);
      if (!queue) queues.set(op.queue, { count: 1, maxSeq: op.seq, oldestEnqueuedAt: enqueuedAt });
      else {
        queue.count++;
        queue.maxSeq = Math.max(queue.maxSeq, op.seq);
        queue.oldestEnqueuedAt = Math.min(queue.oldestEnqueuedAt, enqueuedAt);
      }
    }
  }
  return queues;
}
