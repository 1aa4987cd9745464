import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { open, type Database, type RootDatabase } from "lmdb";
import { PAYLOAD_ENCODING } from "../../payload-codec";
import type { ActivityCounts, ActivityKey, BodyRecord, EarlyRun, IndexRecord, LinkKey, RunKey, RunRow, SummaryRecord, TimelineKey } from "./history-records";

/** The history's LMDB environment and its named databases (see embedded-history.ts for the layout). */
export interface HistoryDbs {
  readonly root: RootDatabase;
  /** [receivedAt, id] → the event's summary: newest-first pages, oldest-first pruning. */
  readonly timeline: Database<SummaryRecord, TimelineKey>;
  /** id → where the event sits in the timeline. */
  readonly index: Database<IndexRecord, string>;
  /** id → payload (its body left out when the raw bytes rebuild it) and raw bytes. */
  readonly bodies: Database<BodyRecord, string>;
  /** [eventId, n] → its n-th run, oldest first. */
  readonly runs: Database<RunRow, RunKey>;
  /** [eventId, n] → a run noted before its event (another process's writer was slower), and the status it left. */
  readonly early: Database<EarlyRun, RunKey>;
  /** [id, kind, receivedAt, other] → true: an event's replays and children. */
  readonly links: Database<true, LinkKey>;
  /** [bucketStart, task, source] → counts of deliveries per status, for the overview. */
  readonly activity: Database<ActivityCounts, ActivityKey>;
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
 * is on disk once its transaction resolves.
 */
export function openHistoryEnvironment(dataDir: string): HistoryDbs {
  const dir = historyDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const root = open({ path: dir, maxDbs: 8, noSubdir: false });
  try {
    return {
      root,
      timeline: root.openDB<SummaryRecord, TimelineKey>({ name: "timeline", ...PAYLOAD_ENCODING }),
      index: root.openDB<IndexRecord, string>({ name: "index", ...PAYLOAD_ENCODING }),
      // Headers and bodies are text that LZ4 halves; lmdb compresses past the threshold.
      bodies: root.openDB<BodyRecord, string>({ name: "bodies", ...PAYLOAD_ENCODING, compression: { threshold: 256 } }),
      runs: root.openDB<RunRow, RunKey>({ name: "runs", ...PAYLOAD_ENCODING }),
      early: root.openDB<EarlyRun, RunKey>({ name: "early", ...PAYLOAD_ENCODING }),
      links: root.openDB<true, LinkKey>({ name: "links" }),
      activity: root.openDB<ActivityCounts, ActivityKey>({ name: "activity", ...PAYLOAD_ENCODING }),
    };
  } catch (error) {
    void root.close();
    throw error;
  }
}

export function historyDatabases(dbs: HistoryDbs): Database[] {
  return [dbs.timeline, dbs.index, dbs.bodies, dbs.runs, dbs.early, dbs.links, dbs.activity] as unknown as Database[];
}

/** Events kept: entries of the timeline (LMDB counts them, no walk). */
export function entryCount(dbs: HistoryDbs): number {
  return (dbs.timeline.getStats() as { entryCount?: number }).entryCount ?? 0;
}
