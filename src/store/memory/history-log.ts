import type { RecordWriter } from "./record-bytes";

/** A segment's buffer grows to this; a record larger than it has a segment of its own. */
const SEGMENT_BUFFER_BYTES = 1024 * 1024;
const FIRST_BUFFER_BYTES = 16 * 1024;
/** Emptied full-size buffers kept for the next segments: under load one fills every few tens of milliseconds. */
const SPARE_BUFFERS = 4;

export const EVENT_RECORD = 1;
export const RUN_RECORD = 2;
/** A record's frame: its kind (u8) and its body's length (u32). */
export const FRAME_BYTES = 5;

/** Part of the log: records one after the other, and what some of them keep as objects. */
export class LogSegment {
  used = 0;
  events = 0;
  runs = 0;
  /** Values a record keeps as objects (see memory-history-record.ts), by the number its record holds. */
  aside: Map<number, unknown> | undefined = undefined;
  /** Bytes those values take, about. */
  asideBytes = 0;

  constructor(
    public buf: Buffer,
    /** Its first record's position in the log (see HistoryLog.end). */
    readonly start: number,
  ) {}
}

export interface LogBounds {
  /** Events the log holds at most, and a few more (a tenth) before the oldest segment goes. */
  readonly maxEvents: number;
  /** Runs it holds at most (runs of events it holds, and of events it never held or already dropped). */
  readonly maxRuns: number;
  /** Bytes it holds at most (the newest segment stays, however large). */
  readonly maxBytes: number;
}

/**
 * The memory history's notes, as written: an append-only log of records (an event, a run) in
 * large buffers, cut into segments, the oldest of which goes whole when a bound is passed.
 *
 * The history holds thousands of events at once, each for a fraction of a second under load:
 * kept as objects, indexed and linked as they came, every one of them survived a young
 * generation or two, was copied and promoted, and then died in the old one. Bytes in a buffer
 * outside the heap are neither copied nor walked by the garbage collector, and appending them
 * is all a request and a run pay: reads index the log when they come (see history-view.ts).
 */
export class HistoryLog {
  /** Oldest first. */
  readonly segments: LogSegment[] = [];
  events = 0;
  runs = 0;
  bytes = 0;
  /** Changes at each append and each drop: a view made at one version holds until the next. */
  version = 0;
  /** Segments dropped so far: a view reads on from where it was only while this holds. */
  drops = 0;
  /**
   * Bytes appended since the log began: where the next record goes. A record's position (its
   * segment's start and its offset) is never reused.
   */
  end = 0;
  private readonly segmentEvents: number;
  private readonly segmentRuns: number;
  private readonly segmentBytes: number;
  private readonly spare: Buffer[] = [];
  /** The segment of the event noted last: the bytes bound keeps it while what follows it fits (runs noted after it). */
  private newestEvent: LogSegment | undefined = undefined;

  constructor(
    private readonly bounds: LogBounds,
    /** Told of each segment dropped, before it goes. */
    private readonly onDrop: (segment: LogSegment) => void = () => undefined,
  ) {
    this.segmentEvents = Math.max(1, Math.floor(bounds.maxEvents / 10));
    this.segmentRuns = Math.max(1, Math.floor(bounds.maxRuns / 10));
    this.segmentBytes = Math.max(1, Math.floor(bounds.maxBytes / 10));
  }

  /**
   * Appends the framed record `writer` holds, and counts `asideBytes` its segment keeps for it
   * as objects; returns its segment (the newest: it stays while the bounds are enforced).
   */
  append(kind: typeof EVENT_RECORD | typeof RUN_RECORD, writer: RecordWriter, asideBytes = 0): LogSegment {
    const length = writer.at;
    const segment = this.segmentFor(length, asideBytes);
    writer.copyTo(segment.buf, segment.used);
    segment.used += length;
    this.end += length;
    segment.asideBytes += asideBytes;
    this.bytes += length + asideBytes;
    if (kind === EVENT_RECORD) {
      segment.events++;
      this.events++;
      this.newestEvent = segment;
    } else {
      segment.runs++;
      this.runs++;
    }
    this.version++;
    this.trim();
    return segment;
  }

  /** Drops the oldest segment (pruning, or a bound passed). */
  dropOldest(): void {
    const segment = this.segments.shift();
    if (segment === undefined) return;
    this.onDrop(segment);
    if (segment === this.newestEvent) this.newestEvent = undefined;
    this.drops++;
    this.events -= segment.events;
    this.runs -= segment.runs;
    this.bytes -= segment.used + segment.asideBytes;
    this.version++;
    if (segment.buf.length === SEGMENT_BUFFER_BYTES && this.spare.length < SPARE_BUFFERS) this.spare.push(segment.buf);
  }

  private trim(): void {
    const { maxEvents, maxRuns, maxBytes } = this.bounds;
    while (this.segments.length > 1) {
      const counted = this.events > maxEvents + this.segmentEvents || this.runs > maxRuns + this.segmentRuns;
      if (!counted && this.bytes <= maxBytes) return;
      // The newest event stays, however large: runs noted after it (in a segment of their own)
      // do not push it out, unless they alone pass the bound.
      const first = this.segments[0]!;
      if (!counted && first === this.newestEvent && this.bytes - first.used - first.asideBytes <= maxBytes) return;
      this.dropOldest();
    }
  }

  /**
   * The newest segment when it has room for `length` more bytes and its share of the bounds;
   * else a new one. A segment holds a tenth of each bound, or a single record larger than that,
   * so that the bytes bound drops what is older than a large record, and nothing newer.
   */
  private segmentFor(length: number, asideBytes: number): LogSegment {
    let segment = this.segments[this.segments.length - 1];
    const bytes = segment === undefined ? 0 : segment.used + segment.asideBytes;
    if (segment === undefined || segment.events >= this.segmentEvents || segment.runs >= this.segmentRuns || (bytes > 0 && bytes + length + asideBytes > this.segmentBytes)) {
      segment = this.newSegment(length);
    } else if (segment.used + length > segment.buf.length) {
      const needed = segment.used + length;
      if (needed > SEGMENT_BUFFER_BYTES) segment = this.newSegment(length);
      else this.grow(segment, Math.min(SEGMENT_BUFFER_BYTES, Math.max(needed, segment.buf.length * 2)));
    }
    return segment;
  }

  private grow(segment: LogSegment, size: number): void {
    const buf = (size === SEGMENT_BUFFER_BYTES ? this.spare.pop() : undefined) ?? Buffer.allocUnsafeSlow(size);
    segment.buf.copy(buf, 0, 0, segment.used);
    segment.buf = buf;
  }

  private newSegment(length: number): LogSegment {
    const buf = length > SEGMENT_BUFFER_BYTES ? Buffer.allocUnsafeSlow(length) : (this.spare.pop() ?? Buffer.allocUnsafeSlow(Math.max(FIRST_BUFFER_BYTES, length)));
    const segment = new LogSegment(buf, this.end);
    this.segments.push(segment);
    return segment;
  }
}

