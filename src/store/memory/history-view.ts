import { EVENT_RECORD, FRAME_BYTES, type HistoryLog, type LogSegment } from "./history-log";
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

/**
 * The log indexed, oldest record first, for reads: made when a read comes, and brought up to
 * date by the next read when the log only grew (a read per replay of a bulk replay, each after
 * a note, reads only that note); made anew once a segment went or a prune hid events.
 *
 * The first record of an id is its event (a later one, a sender's repeat stored again, adds
 * nothing); a run joins its event, noted before or after it; runs of events not held (dropped,
 * pruned, never noted) are left out, as are the oldest beyond `maxEvents` (the log holds up to a
 * tenth more, until its oldest segment goes) and what a prune hid: the records of each `hidden`
 * id before the position it gives, runs included (one noted after the prune is a new event, as
 * it would be on another engine).
 */
export class HistoryView {
  readonly byId = new Map<string, ViewEntry>();
  /** Oldest first, by receipt time then id. */
  ordered: ViewEntry[] = [];
  /** Events the log still holds beyond `maxEvents`, older than every one in `ordered`. */
  readonly beyond = new Set<string>();
  /** Runs whose event is not read yet (noted before it), by event id. */
  private readonly early = new Map<string, RunPlace[]>();
  /** Links to events not read yet (a child or a replay noted before its parent or original). */
  private readonly looseChildren = new Map<string, string[]>();
  private readonly looseReplays = new Map<string, string[]>();
  /** How far the log is read: the segment (its index in the log) and the offset in it. */
  private segmentIndex = 0;
  private at = 0;

  constructor(
    private readonly log: HistoryLog,
    private readonly hidden: ReadonlyMap<string, number>,
    private readonly maxEvents: number,
  ) {
    this.extend();
  }

  /** Reads the records the log appended since; only while no segment went (see the class). */
  extend(): void {
    const { segments } = this.log;
    const added: ViewEntry[] = [];
    for (let i = this.segmentIndex; i < segments.length; i++) {
      const segment = segments[i]!;
      this.read(segment, i === this.segmentIndex ? this.at : 0, added);
      this.segmentIndex = i;
      this.at = segment.used;
    }
    if (added.length === 0) return;
    // Nearly in order already (noted as received): the sort runs through them once.
    added.sort(oldestFirst);
    this.place(added);
    for (const entry of added) this.link(entry);
    const over = this.ordered.length - this.maxEvents;
    if (over > 0) {
      for (let i = 0; i < over; i++) {
        const { id } = this.ordered[i]!;
        this.byId.delete(id);
        this.beyond.add(id);
      }
      this.ordered = this.ordered.slice(over);
    }
  }

  private read(segment: LogSegment, from: number, added: ViewEntry[]): void {
    const { buf } = segment;
    const { byId, early, hidden } = this;
    let at = from;
    while (at < segment.used) {
      const body = at + FRAME_BYTES;
      const reader = new RecordReader(buf, body);
      const position = segment.start + at;
      if (buf[at] === EVENT_RECORD) {
        const head = readEventHead(segment, reader);
        if (!byId.has(head.id) && !this.beyond.has(head.id) && !hides(hidden, head.id, position)) {
          const runs = early.get(head.id);
          if (runs !== undefined) early.delete(head.id);
          const entry: ViewEntry = { id: head.id, receivedAt: head.receivedAt, origin: head.origin, parentId: head.parentId, replayOf: head.replayOf, segment, detailsAt: head.detailsAt, position, runs, children: undefined, replays: undefined };
          byId.set(head.id, entry);
          added.push(entry);
        }
      } else {
        const eventId = readRunEventId(reader);
        const place: RunPlace = { segment, at: reader.at };
        const entry = byId.get(eventId);
        if (entry !== undefined) (entry.runs ??= []).push(place);
        // A run of an event pruned went with it.
        else if (!this.beyond.has(eventId) && !hides(hidden, eventId, position)) push(early, eventId, place);
      }
      at = body + buf.readUInt32LE(at + 1);
    }
  }

  /** Merges new entries (sorted) into `ordered`, from its end: most are newer than all before them. */
  private place(added: readonly ViewEntry[]): void {
    const { ordered } = this;
    let i = ordered.length - 1;
    for (const entry of added) ordered.push(entry);
    let to = ordered.length - 1;
    for (let j = added.length - 1; j >= 0 && to > i; to--) {
      if (i >= 0 && oldestFirst(ordered[i]!, added[j]!) > 0) ordered[to] = ordered[i--]!;
      else ordered[to] = added[j--]!;
    }
  }

  /** Links a new entry to its parent and original, and takes the links noted before it. */
  private link(entry: ViewEntry): void {
    const children = this.looseChildren.get(entry.id);
    if (children !== undefined) {
      this.looseChildren.delete(entry.id);
      (entry.children ??= []).push(...children);
    }
    const replays = this.looseReplays.get(entry.id);
    if (replays !== undefined) {
      this.looseReplays.delete(entry.id);
      (entry.replays ??= []).push(...replays);
    }
    if (entry.parentId !== undefined) {
      const parent = this.byId.get(entry.parentId);
      if (parent !== undefined) (parent.children ??= []).push(entry.id);
      else push(this.looseChildren, entry.parentId, entry.id);
    }
    if (entry.replayOf !== undefined) {
      const original = this.byId.get(entry.replayOf);
      if (original !== undefined) (original.replays ??= []).push(entry.id);
      else push(this.looseReplays, entry.replayOf, entry.id);
    }
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
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
