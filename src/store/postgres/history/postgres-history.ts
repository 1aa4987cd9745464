import type { ActivityRow, EventNote, HistoryEvent, HistoryPage, HistoryQuery, HistoryStore, RunNote } from "../../history";
import type { Logger } from "../../../util/logger";
import type { PostgresPoolClient, PostgresQueryResult } from "../postgres-options";
import type { ThrottledLog } from "../throttled-log";
import { activitySql } from "./activity-sql";
import { getEventSql } from "./get-event-sql";
import { encodeCursor } from "../../history-query";
import { optionalText, payloadOf, runOf, summaryOf, withOptional, type RunRow } from "./event-views";
import { historyTables, type HistoryTables } from "./history-tables";
import { HistoryWriter, type HistoryWriterOptions } from "./history-writer";
import { listEventsSql } from "./list-events-sql";
import { noteColumns } from "./note-columns";
import { eventRows, runRows, type NoteRows } from "./note-rows";
import { countEventsSql, historySizeSql, pruneOldestSql, pruneOlderSql, pruneOrphanRunsSql } from "./prune-sql";
import { writeNotesSql } from "./write-notes-sql";

export interface PostgresHistoryHost {
  readonly schema: string;
  /** Reads and pruning: through the store (refused while it is not open). */
  readonly run: (text: string, values: unknown[]) => Promise<PostgresQueryResult>;
  /** The writer's statement: straight to the pool, never marking the store failing. */
  readonly write: (text: string, values: unknown[]) => Promise<PostgresQueryResult>;
  /** A connection for the count bound's short transaction. */
  readonly connect: () => Promise<PostgresPoolClient>;
  /** The client's limit on each statement of that transaction: a stalled network fails it, never hangs it. */
  readonly queryTimeoutMs: number;
  readonly log: ThrottledLog;
  readonly logger: Logger | undefined;
  /** True while the store's database cannot be reached (the writer waits, see HistoryWriterOptions.blocked). */
  readonly blocked?: () => boolean;
}

/** Tuning of the background writer (see HistoryWriter). */
export type HistoryWriterTuning = Omit<HistoryWriterOptions, "write" | "log" | "logger" | "blocked">;

/** Rows one pruning statement deletes: short statements, short locks, whatever the backlog. */
const PRUNE_BATCH = 1_000;
/** How often a prune also looks for runs whose event never came. */
const ORPHAN_SWEEP_MS = 3_600_000;

/**
 * The event history in three tables of the store's schema, shared by every replica: what one
 * accepted is listed, shown and replayed from any other. Notes go through a background writer
 * (batches of one statement each); reads and pruning are plain statements.
 */
export class PostgresHistory implements HistoryStore {
  private readonly tables: HistoryTables;
  private readonly writer: HistoryWriter;
  private orphansSweptAt = 0;
  private readonly sql: { readonly write: string; readonly writeAgain: string; readonly get: string; readonly activity: string; readonly older: string; readonly oldest: string; readonly orphans: string };

  constructor(
    private readonly host: PostgresHistoryHost,
    tuning: HistoryWriterTuning = {},
  ) {
    this.tables = historyTables(host.schema);
    this.sql = {
      write: writeNotesSql(this.tables, false),
      writeAgain: writeNotesSql(this.tables, true),
      get: getEventSql(this.tables),
      activity: activitySql(this.tables),
      older: pruneOlderSql(this.tables),
      oldest: pruneOldestSql(this.tables),
      orphans: pruneOrphanRunsSql(this.tables),
    };
    this.writer = new HistoryWriter({
      ...tuning,
      log: host.log,
      logger: host.logger,
      blocked: host.blocked,
      write: async (batch, repeat) => {
        await host.write(repeat ? this.sql.writeAgain : this.sql.write, noteColumns(batch));
      },
    });
  }

  /** Notes dropped so far, and statements written (for tests and benchmarks). */
  get writes(): { readonly lost: number; readonly batches: number; readonly pending: number } {
    return { lost: this.writer.lost, batches: this.writer.batches, pending: this.writer.pending };
  }

  /** Encoded now (the note as it is when made), written later. */
  noteEvent(note: EventNote): void {
    let rows: NoteRows;
    try {
      rows = eventRows(note);
    } catch (error) {
      return this.writer.unencodable(error);
    }
    this.writer.add(rows);
  }

  noteRun(note: RunNote): void {
    let rows: NoteRows;
    try {
      rows = runRows(note);
    } catch (error) {
      return this.writer.unencodable(error);
    }
    this.writer.add(rows);
  }

  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Gives what is queued one try, then drops the rest (the store is closing). */
  close(): Promise<void> {
    return this.writer.close();
  }

  async list(query: HistoryQuery): Promise<HistoryPage> {
    const { text, values, limit } = listEventsSql(this.tables, query ?? {});
    const { rows } = await this.host.run(text, values);
    const events = rows.slice(0, limit).map(summaryOf);
    if (rows.length <= limit) return { events };
    const last = events[events.length - 1];
    return { events, next: encodeCursor({ receivedAt: last.receivedAt, id: last.id }) };
  }

  async get(id: string): Promise<HistoryEvent | undefined> {
    if (typeof id !== "string") throw new TypeError(`history: an event id must be a string, got ${typeof id}`);
    // No id stored holds U+0000 (it is written U+FFFD), and the database refuses it in a parameter.
    if (id.includes("\u0000")) return undefined;
    const { rows } = await this.host.run(this.sql.get, [id]);
    if (rows.length === 0) return undefined;
    const row = rows[0];
    const summary = summaryOf(row);
    const event: HistoryEvent = {
      ...summary,
      payload: payloadOf(row),
      runs: (row.runs as RunRow[]).map(runOf),
      replays: row.replays as string[],
      children: row.children as string[],
    };
    return withOptional(withOptional(event, "raw", row.raw === null ? undefined : (row.raw as Buffer)), "traceId", optionalText(row.trace_id));
  }

  async activity(since: number, bucketMs: number): Promise<ActivityRow[]> {
    if (!Number.isFinite(since)) throw new TypeError(`history: since must be a time in ms since the epoch, got ${String(since)}`);
    if (!(Number.isFinite(bucketMs) && bucketMs > 0)) throw new TypeError(`history: bucketMs must be a positive number of milliseconds, got ${String(bucketMs)}`);
    const { rows } = await this.host.run(this.sql.activity, [since, bucketMs]);
    return rows.map((row) => {
      const out: ActivityRow = {
        task: row.task as string,
        bucketStart: Number(row.bucket),
        received: Number(row.received),
        succeeded: Number(row.succeeded),
        failed: Number(row.failed),
        dead: Number(row.dead),
        pending: Number(row.pending),
      };
      return withOptional(out, "source", optionalText(row.source));
    });
  }

  /**
   * In batches of PRUNE_BATCH rows, oldest first: events received before `before` (replicas
   * pruning at once take different rows), then, when `maxEvents` is given, the oldest beyond it
   * (one replica at a time, under an advisory lock; another that finds it taken skips), then
   * (once an hour) runs left without their event.
   */
  async prune(before: number, maxEvents?: number): Promise<number> {
    if (!Number.isFinite(before)) throw new TypeError(`history: prune's before must be a time in ms since the epoch, got ${String(before)}`);
    if (maxEvents !== undefined && !(Number.isInteger(maxEvents) && maxEvents >= 0)) {
      throw new TypeError(`history: maxEvents must be a whole number of 0 or more, got ${String(maxEvents)}`);
    }
    let removed = 0;
    for (;;) {
      const n = await this.count(this.sql.older, [before, PRUNE_BATCH]);
      removed += n;
      if (n < PRUNE_BATCH) break;
    }
    if (maxEvents !== undefined) removed += await this.pruneBeyond(maxEvents);
    // Orphan runs are rare (a replica that died with notes unsent) and looking for them reads
    // the old end of the runs table: once an hour is enough.
    if (Date.now() - this.orphansSweptAt >= ORPHAN_SWEEP_MS) {
      this.orphansSweptAt = Date.now();
      for (;;) {
        const { rowCount } = await this.host.run(this.sql.orphans, [before, PRUNE_BATCH]);
        if ((rowCount ?? 0) < PRUNE_BATCH) break;
      }
    }
    return removed;
  }

  async size(): Promise<{ readonly events: number; readonly bytes: number }> {
    const { rows } = await this.host.run(historySizeSql(this.tables), []);
    return { events: Number(rows[0].events), bytes: Number(rows[0].bytes) };
  }

  private async pruneBeyond(maxEvents: number): Promise<number> {
    const client = await this.host.connect();
    const query_timeout = this.host.queryTimeoutMs;
    let broken: Error | undefined;
    try {
      await client.query({ text: "BEGIN ISOLATION LEVEL READ COMMITTED", query_timeout });
      try {
        const { rows } = await client.query({
          text: "SELECT pg_try_advisory_xact_lock(hashtext('webhook-tasks history count bound'), hashtext($1)) AS got",
          values: [this.host.schema],
          query_timeout,
        });
        let removed = 0;
        if (rows[0].got === true) {
          // Counted after the lock: no other replica deletes meanwhile, so none deletes twice.
          const { rows: counted } = await client.query({ text: countEventsSql(this.tables), query_timeout });
          let excess = Number(counted[0].n) - maxEvents;
          while (excess > 0) {
            const { rows: gone } = await client.query({ text: this.sql.oldest, values: [Math.min(excess, PRUNE_BATCH)], query_timeout });
            const n = Number(gone[0].n);
            if (n === 0) break;
            removed += n;
            excess -= n;
          }
        }
        await client.query({ text: "COMMIT", query_timeout });
        return removed;
      } catch (error) {
        await client.query({ text: "ROLLBACK", query_timeout }).catch((rollback: unknown) => {
          broken = rollback instanceof Error ? rollback : new Error(String(rollback));
        });
        throw error;
      }
    } catch (error) {
      broken ??= error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.release(broken);
    }
  }

  private async count(text: string, values: unknown[]): Promise<number> {
    const { rows } = await this.host.run(text, values);
    return Number(rows[0].n);
  }
}
