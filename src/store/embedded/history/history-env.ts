import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { open, type Database, type DatabaseOptions, type RootDatabase } from "lmdb";
import { HISTORY_CODEC } from "./history-codec";
import type { ActivityCounts, ActivityKey, EarlyKey, EarlyRun, IndexRecord, SummaryRecord, TimelineKey } from "./history-records";

/** The history's LMDB environment and its named databases (see embedded-history.ts for the layout). */
export interface HistoryDbs {
  readonly root: RootDatabase;
  /** [receivedAt, id] → the event: summary, runs, links, and its body as bytes. Newest-first pages, oldest-first pruning. */
  readonly timeline: Database<SummaryRecord, TimelineKey>;
  /** id → where the event sits in the timeline. */
  readonly index: Database<IndexRecord, string>;
  /** [eventId, n] → a run noted before its event (another process's writer was slower), and the status it left. */
  readonly early: Database<EarlyRun, EarlyKey>;
  /** [minute, task, source, writer] → counts of deliveries per status, for the overview. */
  readonly activity: Database<ActivityCounts, ActivityKey>;
}

/** Each database's values by HISTORY_CODEC (lmdb takes an `encoder` per database; its typings list it for the root only). */
function encoded(name: string): DatabaseOptions & { name: string; encoder: typeof HISTORY_CODEC } {
  return { name, encoder: HISTORY_CODEC };
}

/** The history lives beside the queues in its own environment: `<data dir>/history/`. */
export function historyDir(dataDir: string): string {
  return join(dataDir, "history");
}

export function historyExists(dataDir: string): boolean {
  return existsSync(join(historyDir(dataDir), "data.mdb"));
}

/**
 * Its own environment, not named databases of the queues' one: LMDB has one writer per
 * environment, so a batch of notes never holds up a queue write, and the history's pages never
 * count against the store's `maxBytes`. Durability is lmdb's default (synced commits): a batch
 * is on disk once its write resolves. Not `noSync`, though the history is a record and not the
 * work: it saved about a tenth of the history's CPU, but after a power loss LMDB no longer
 * promises an intact environment, and lmdb-js crashes the process (SIGSEGV) on a damaged file
 * rather than throwing: a damaged record must not keep the app from starting.
 *
 * 8 KiB pages: a page holds a whole number of events (about 700 bytes each), so 4 KiB pages
 * waste up to a fifth of each (915 bytes an event measured, 774 with 8 KiB); but each new id
 * lands on a random page of the id index, and a commit rewrites every page it touched, so
 * larger pages write more (16 KiB: 745 bytes an event, and twice the bytes written of 4 KiB).
 */
export function openHistoryEnvironment(dataDir: string): HistoryDbs {
  const dir = historyDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const root = open({ path: dir, maxDbs: 6, noSubdir: false, pageSize: 8_192 });
  try {
    return {
      root,
      timeline: root.openDB<SummaryRecord, TimelineKey>(encoded("timeline")),
      index: root.openDB<IndexRecord, string>(encoded("index")),
      early: root.openDB<EarlyRun, EarlyKey>(encoded("early")),
      activity: root.openDB<ActivityCounts, ActivityKey>(encoded("activity")),
    };
  } catch (error) {
    void root.close();
    throw error;
  }
}

export function historyDatabases(dbs: HistoryDbs): Database[] {
  return [dbs.timeline, dbs.index, dbs.early, dbs.activity] as unknown as Database[];
}

/** Events kept: entries of the timeline (LMDB counts them, no walk). */
export function entryCount(dbs: HistoryDbs): number {
  return (dbs.timeline.getStats() as { entryCount?: number }).entryCount ?? 0;
}
