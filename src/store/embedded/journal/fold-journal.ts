import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ReadyKey } from "../keys";
import type { EmbeddedDbs } from "../lmdb-env";
import { messageRecord } from "../records";
import { syncDirectory } from "./sync-directory";
import type { EnqueueOp } from "./journal-format";
import { decodeMessage } from "./journal-lane";
import { SEGMENT_FILE } from "./journal-log";
import { readSegment, type SegmentDamage } from "./segment-reader";

/** A segment that held bad bytes: what could be read of it went into the B-tree, the file was set aside. */
export interface DamagedSegment extends SegmentDamage {
  /** Where the file is now (in the quarantine folder). */
  readonly quarantinedAs: string;
  readonly framesRecovered: number;
}

export interface FoldReport {
  /** Messages moved into the B-tree. */
  readonly moved: number;
  readonly damaged: readonly DamagedSegment[];
}

/**
 * At open, before anything is claimed: every message still in the journal (enqueued, no
 * done-marker) is written into the B-tree's ready queue, with its own sequence number so the
 * queue keeps its order.
 *
 * One segment at a time, oldest first: the messages whose latest copy is in that segment go in
 * one transaction, and once it is synced the segment is deleted. A disk with little room left
 * then needs room for one segment's messages, not the whole journal's. Keys are made from the
 * journal's epoch and the message's sequence number, so if the process dies before a segment
 * is deleted, the next open writes the same keys again instead of duplicating messages.
 *
 * A segment with damage (see readSegment) is not deleted but moved to `quarantineDir`, after
 * every message that could be read from it is in the B-tree.
 */
export async function foldJournal(dir: string, dbs: EmbeddedDbs, quarantineDir: string): Promise<FoldReport> {
  if (!existsSync(dir)) return { moved: 0, damaged: [] };
  const files = readdirSync(dir)
    .filter((name) => SEGMENT_FILE.test(name))
    .sort();
  if (files.length === 0) return { moved: 0, damaged: [] };

  const bySegment = new Map<string, Array<{ readonly epoch: string; readonly op: EnqueueOp }>>();
  const damage = new Map<string, { readonly damage: SegmentDamage; readonly frames: number }>();
  for (const [epoch, names] of byEpoch(files)) {
    const open = new Map<number, { readonly op: EnqueueOp; readonly name: string }>();
    for (const name of names) {
      const read = readSegment(readFileSync(join(dir, name)));
      if (read.damage) damage.set(name, { damage: read.damage, frames: read.frames });
      for (const op of read.ops) {
        if (op.kind === "done") open.delete(op.entryId);
        // Copied: the file's buffer can then go as soon as this segment is read.
        else open.set(op.entryId, { name, op: { ...op, meta: Buffer.from(op.meta), raw: op.raw && Buffer.from(op.raw) } });
      }
    }
    for (const { op, name } of open.values()) {
      let list = bySegment.get(name);
      if (!list) bySegment.set(name, (list = []));
      list.push({ epoch, op });
    }
  }

  let moved = 0;
  const damaged: DamagedSegment[] = [];
  for (const name of files) {
    const pending = bySegment.get(name) ?? [];
    if (pending.length > 0) {
      dbs.root.transactionSync(() => {
        for (const { epoch, op } of pending) {
          const key: ReadyKey = [op.queue, op.seq, `j:${epoch}`];
          dbs.ready.putSync(key, messageRecord(decodeMessage(op.meta, op.raw)));
        }
      });
      // lmdb syncs after the commit (overlapping sync): the segment goes only once that is done.
      await dbs.root.flushed;
      moved += pending.length;
    }
    const bad = damage.get(name);
    if (!bad) {
      unlinkSync(join(dir, name));
      continue;
    }
    const quarantinedAs = join(quarantineDir, name);
    mkdirSync(quarantineDir, { recursive: true });
    renameSync(join(dir, name), quarantinedAs);
    syncDirectory(quarantineDir);
    syncDirectory(dirname(quarantineDir));
    damaged.push({ ...bad.damage, quarantinedAs, framesRecovered: bad.frames });
  }
  syncDirectory(dir);
  return { moved, damaged };
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
