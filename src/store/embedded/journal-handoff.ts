import type { EmitRecord, QueuedMessage } from "../store";
import { StoreRefusedError } from "../store-errors";
import type { EmbeddedStoreOptions } from "./embedded-store";
import type { Location } from "./keys";
import type { EmbeddedDbs } from "./lmdb-env";
import type { QueueTracker } from "./queue-tracker";
import type { WriteHealth } from "./write-health";
import type { DiskRoom } from "./disk-room";
import { DataDirLostError } from "./data-dir-guard";
import { foldJournal, type FoldReport } from "./journal/fold-journal";
import { DEFAULT_LANE_LIMITS, JournalLane, type LaneEntry } from "./journal/journal-lane";
import { JournalLog } from "./journal/journal-log";
import type { Logger } from "../../util/logger";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * The journal's side of the embedded store: opening it, folding what it holds into the B-tree
 * at open, taking its lane's messages in a claim, and letting them go (done-markers) once they
 * are finished or have moved to the B-tree.
 */

/** The journal of a consumer: the segment log and the in-memory lane over it. */
export interface OpenedJournal {
  readonly log: JournalLog;
  readonly lane: JournalLane;
}

const DEFAULT_SEGMENT_BYTES = 64 * 1024 * 1024;

export function journalDir(dir: string): string {
  return join(dir, "journal");
}

/** What the journal still holds from before joins the B-tree; damaged segments are reported. */
export async function foldIntoBTree(dir: string, dbs: EmbeddedDbs, logger: Logger): Promise<void> {
  reportFold(dir, logger, await foldJournal(journalDir(dir), dbs, join(dir, "quarantine")));
}

function reportFold(dir: string, logger: Logger, report: FoldReport): void {
  for (const segment of report.damaged) {
    logger.error(
      {
        dir,
        quarantinedAs: segment.quarantinedAs,
        framesRecovered: segment.framesRecovered,
        bytesSkipped: segment.bytesSkipped,
        header: segment.header,
      },
      "a journal segment was damaged: every frame that passed its checksum was recovered, the bytes between were skipped, and the file was moved to the quarantine folder",
    );
  }
}

/** What opening the journal reports to, and asks of, its store. */
export interface JournalHost {
  readonly journalHealth: WriteHealth;
  readonly room: DiskRoom;
  dirLost(error: DataDirLostError): void;
}

export function openJournal(dir: string, journalOptions: EmbeddedStoreOptions["journal"], host: JournalHost): OpenedJournal {
  const options = journalOptions || {};
  const log = new JournalLog({
    dir: journalDir(dir),
    epoch: randomBytes(6).toString("hex"),
    segmentBytes: options.segmentBytes ?? DEFAULT_SEGMENT_BYTES,
    onFailure: (error) => {
      if (error instanceof DataDirLostError) host.dirLost(error);
      host.journalHealth.failed(error);
    },
    onSuccess: () => host.journalHealth.succeeded(),
  });
  const lane = new JournalLane(log, {
    maxMessages: options.maxMessages ?? DEFAULT_LANE_LIMITS.maxMessages,
    maxBytes: options.maxBytes ?? DEFAULT_LANE_LIMITS.maxBytes,
  }, (bytes) => host.room.hasRoomFor(bytes));
  return { log, lane };
}

/**
 * The lane's waiting messages of `queue`, for a claim to merge with the B-tree's in sequence
 * order: each call claims into `out` those before `seq` (up to `limit`).
 */
export function laneClaimer(
  journal: OpenedJournal | undefined,
  tracker: QueueTracker,
  queue: string,
  limit: number,
  out: QueuedMessage[],
): (seq: number) => void {
  const lane = journal?.lane.waitingIn(queue);
  const fromLane = lane && lane.size > 0 ? lane.values() : undefined;
  let nextInLane = fromLane?.next().value as LaneEntry | undefined;
  const takeLaneBefore = (seq: number): void => {
    while (nextInLane && nextInLane.seq < seq && out.length < limit) {
      const entry: LaneEntry = nextInLane;
      nextInLane = fromLane!.next().value as LaneEntry | undefined;
      // A message with the same id already claimed: this one waits its turn.
      if (tracker.claimedAt(queue, entry.message.id)) continue;
      journal!.lane.claim(entry);
      tracker.claim(queue, entry.message.id, { in: "journal", entryId: entry.entryId });
      out.push(entry.message);
    }
  };
  return takeLaneBefore;
}

/** The queue operations a journal message's completion reports to. */
export interface ClaimBook {
  readonly tracker: QueueTracker;
  abandon(queue: string, id: string): void;
  finished(queue: string, id: string): void;
  notify(queue: string): void;
}

/**
 * A message of the journal is done: a done-marker, in the next frame. With an output, the
 * marker and the output go in one frame: on disk together or not at all.
 */
export async function completeFromJournal(
  book: ClaimBook,
  queue: string,
  id: string,
  entryId: number,
  journal: OpenedJournal,
  emit: EmitRecord | undefined,
): Promise<void> {
  const { lane } = journal;
  if (!emit) {
    try {
      await lane.done(entryId);
    } catch (error) {
      book.abandon(queue, id);
      throw error;
    }
    return book.finished(queue, id);
  }
  const seq = book.tracker.allocate(emit.queue);
  book.tracker.adjust(emit.queue, 1);
  try {
    // Into the journal even past its bounds: the input leaves it in the same frame, so it
    // holds no more than before, and the two stay one atomic step.
    await lane.doneAndEnqueue(entryId, emit.queue, seq, emit.message);
    book.notify(emit.queue);
  } catch (error) {
    book.tracker.adjust(emit.queue, -1);
    // As for the B-tree: a failed write gives the message back; a value that cannot be
    // encoded leaves it claimed, for the runner to retry or dead-letter.
    if (error instanceof StoreRefusedError) book.abandon(queue, id);
    throw error;
  }
  book.finished(queue, id);
}

/**
 * A message of the journal now lives in the B-tree (as a retry or a dead letter): its
 * done-marker follows, and is waited for. A crash between the two writes (a frame's time)
 * leaves it in both places, and it is delivered once more (at-least-once). If the marker
 * cannot be written, the message is let go of all the same: it is safe in the B-tree.
 */
export async function leftJournal(lane: JournalLane | undefined, from: Location | undefined): Promise<void> {
  if (from?.in !== "journal" || !lane) return;
  await lane.done(from.entryId).catch(() => lane.moved(from.entryId));
}
