import { existsSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { ReadyKey } from "../keys";
import type { EmbeddedDbs } from "../lmdb-env";
import { messageRecord } from "../records";
import { syncDirectory } from "./sync-directory";
import { readSegment, type EnqueueOp } from "./journal-format";
import { decodeMessage } from "./journal-lane";
import { SEGMENT_FILE } from "./journal-log";

/**
 * At open, before anything is claimed: every message still in the journal (enqueued, no
 * done-marker) is written into the B-tree's ready queue, with its own sequence number so the
 * queue keeps its order, in one transaction; once that is synced, the segments are deleted.
 *
 * Keys are made from the journal's epoch and the message's sequence number, so if the process
 * dies after the transaction and before the deletion, the next open writes the same keys again
 * instead of duplicating messages.
 */
export async function foldJournal(dir: string, dbs: EmbeddedDbs): Promise<void> {
  if (!existsSync(dir)) return;
  const files = readdirSync(dir)
    .filter((name) => SEGMENT_FILE.test(name))
    .sort();
  if (files.length === 0) return;

  const pending: Array<{ readonly epoch: string; readonly op: EnqueueOp }> = [];
  for (const [epoch, names] of byEpoch(files)) {
    const open = new Map<number, EnqueueOp>();
    for (const name of names) {
      // Each segment is read up to its first bad frame: a write that failed, or the crash.
      for (const op of readSegment(readFileSync(join(dir, name))).ops) {
        if (op.kind === "done") open.delete(op.entryId);
        // Copied: the file's buffer can then go as soon as this segment is read.
        else open.set(op.entryId, { ...op, meta: Buffer.from(op.meta), raw: op.raw && Buffer.from(op.raw) });
      }
    }
    for (const op of open.values()) pending.push({ epoch, op });
  }

  if (pending.length > 0) {
    dbs.root.transactionSync(() => {
      for (const { epoch, op } of pending) {
        const key: ReadyKey = [op.queue, op.seq, `j:${epoch}`];
        dbs.ready.putSync(key, messageRecord(decodeMessage(op.meta, op.raw)));
      }
    });
    // lmdb syncs after the commit (overlapping sync): the journal goes only once that is done.
    await dbs.root.flushed;
  }
  for (const name of files) unlinkSync(join(dir, name));
  syncDirectory(dir);
}

function byEpoch(files: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const name of files) {
    const epoch = SEGMENT_FILE.exec(name)![1]!;
    let names = groups.get(epoch);
    if (!names) groups.set(epoch, (names = []));
    names.push(name);
  }
  return groups;
}
