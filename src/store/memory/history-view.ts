import { EVENT_RECORD, FRAME_BYTES, type HistoryLog } from "./history-log";
import { readEventHead, readRunEventId, type EventHead, type RunPlace } from "./memory-history-record";
import { RecordReader } from "./record-bytes";

/** An event of the log as a read sees it: its head, its runs' places, its links. */
export interface ViewEntry extends EventHead {
  /** Where its record lies in the log (see HistoryLog.end). */
  readonly position: number;
  /** In the order noted. */
  runs: RunPlace[] | undefined;
  /** Ids of the events it emitted and of its replays, held and not pruned. */
  children: string[] | undefined;
  replays: string[] | undefined;
}

/** The log indexed: made for a read, kept until the log changes. */
export interface HistoryView {
  readonly byId: ReadonlyMap<string, ViewEntry>;
  /** Oldest first, by receipt time then id. */
  readonly ordered: readonly ViewEntry[];
  /** Events the log still holds beyond `maxEvents`, older than every one in `ordered`. */
  readonly beyond: readonly string[];
}

/**
 * Indexes the log, oldest record first. The first record of an id is its event (a later one, a
 * sender's repeat stored again, adds nothing); a run joins its event, noted before or after it;
 * runs of events not held (dropped, pruned, never noted) are left out, as are the oldest beyond
 * `maxEvents` (the log holds up to a tenth more, until its oldest segment goes) and what a prune
 * hid: the records of each `hidden` id before the position it gives, runs included (one noted
 * after the prune is a new event, as it would be on another engine).
 */
export function viewOf(log: HistoryLog, hidden: ReadonlyMap<string, number>, maxEvents: number): HistoryView {
  const byId = new Map<string, ViewEntry>();
  let ordered: ViewEntry[] = [];
  const early = new Map<string, RunPlace[]>();
  for (const segment of log.segments) {
    const { buf } = segment;
    let at = 0;
    while (at < segment.used) {
      const body = at + FRAME_BYTES;
      const reader = new RecordReader(buf, body);
      const position = segment.start + at;
      if (buf[at] === EVENT_RECORD) {
        const head = readEventHead(segment, reader);
        if (!byId.has(head.id) && !hides(hidden, head.id, position)) {
          const runs = early.get(head.id);
          if (runs !== undefined) early.delete(head.id);
          const entry: ViewEntry = { id: head.id, receivedAt: head.receivedAt, origin: head.origin, parentId: head.parentId, replayOf: head.replayOf, segment, detailsAt: head.detailsAt, position, runs, children: undefined, replays: undefined };
          byId.set(head.id, entry);
          ordered.push(entry);
        }
      } else {
        const eventId = readRunEventId(reader);
        const place: RunPlace = { segment, at: reader.at };
        const entry = byId.get(eventId);
        if (entry !== undefined) (entry.runs ??= []).push(place);
        // A run of an event pruned went with it.
        else if (!hides(hidden, eventId, position)) {
          const runs = early.get(eventId);
          if (runs === undefined) early.set(eventId, [place]);
          else runs.push(place);
        }
      }
      at = body + buf.readUInt32LE(at + 1);
    }
  }
  // Nearly in order already (noted as received): the sort runs through it once.
  ordered.sort(oldestFirst);
  const beyond: string[] = [];
  if (ordered.length > maxEvents) {
    const cut = ordered.length - maxEvents;
    for (let i = 0; i < cut; i++) {
      byId.delete(ordered[i]!.id);
      beyond.push(ordered[i]!.id);
    }
    ordered = ordered.slice(cut);
  }
  // Links to events held (reads order them by age).
  for (const entry of ordered) {
    if (entry.parentId !== undefined) {
      const parent = byId.get(entry.parentId);
      if (parent !== undefined) (parent.children ??= []).push(entry.id);
    }
    if (entry.replayOf !== undefined) {
      const original = byId.get(entry.replayOf);
      if (original !== undefined) (original.replays ??= []).push(entry.id);
    }
  }
  return { byId, ordered, beyond };
}

/** Whether a prune hid the record of `id` at `position`: one noted before it. */
export function hides(hidden: ReadonlyMap<string, number>, id: string, position: number): boolean {
  const end = hidden.get(id);
  return end !== undefined && position < end;
}

/** The list's order: by receipt time, then id. */
function oldestFirst(a: ViewEntry, b: ViewEntry): number {
  return a.receivedAt - b.receivedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
