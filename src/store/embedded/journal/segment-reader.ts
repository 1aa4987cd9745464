import { crc32 } from "node:zlib";
import {
  FRAME_HEADER_BYTES,
  frameChecksum,
  MAX_FRAME_BYTES,
  parsePayload,
  SEGMENT_HEADER_BYTES,
  SEGMENT_MAGIC,
  SEGMENT_VERSION,
  type JournalOp,
} from "./journal-format";
import { recoverSaltCrc } from "./salt-recovery";

/** Bad bytes in a segment that a crash does not explain: the file is kept aside for a person to look at. */
export interface SegmentDamage {
  /**
   * "intact"; "repaired" when the header was damaged but its salt could still be used or was
   * worked out from the frames; "unreadable" when no frame could be checked.
   */
  readonly header: "intact" | "repaired" | "unreadable";
  /** Bytes that were not part of a good frame (between good frames, and a damaged tail). */
  readonly bytesSkipped: number;
  /** Runs of bad bytes. */
  readonly gaps: number;
}

export interface SegmentReadResult {
  readonly ops: JournalOp[];
  /** Good frames read. */
  readonly frames: number;
  /** Offset just past the last good frame. */
  readonly end: number;
  /** Why reading stopped before the end of the file (torn or damaged); undefined when it ended cleanly. */
  readonly stoppedBecause?: string;
  /** Set when the file holds bad bytes that a crash does not explain. */
  readonly damage?: SegmentDamage;
}

/**
 * The operations of every good frame of a segment, in order. Buffers in the ops point into `file`.
 *
 * A crash leaves at most a torn last frame: one cut short by the end of the file, or zeros
 * where a write did not land. That tail is dropped quietly. Anything else that fails its
 * checksum is damage (a flipped bit, a bad sector): reading does not stop there but scans
 * forward, byte by byte, for the next frame that passes its salted checksum with a higher
 * frame number, so one bad frame costs that frame only. A damaged header is read with its salt
 * as found; when no frame passes with it, the salt is worked out from the frames themselves
 * (see salt-recovery.ts).
 */
export function readSegment(file: Buffer): SegmentReadResult {
  if (file.length < SEGMENT_HEADER_BYTES) return { ops: [], frames: 0, end: 0, stoppedBecause: "not a journal segment" };
  const intact = file.toString("latin1", 0, 4) === SEGMENT_MAGIC && file.readUInt32LE(4) === SEGMENT_VERSION;
  const stored = Buffer.from(file.subarray(8, 16));
  let read = readFrames(file, crc32(stored));
  let saltRepaired = false;
  if (read.frames === 0 && file.length > SEGMENT_HEADER_BYTES) {
    const saltCrc = recoverSaltCrc(file, stored);
    if (saltCrc !== undefined && saltCrc !== crc32(stored)) {
      const again = readFrames(file, saltCrc);
      if (again.frames > 0) {
        read = again;
        saltRepaired = true;
      }
    }
  }
  const header = read.frames === 0 && file.length > SEGMENT_HEADER_BYTES ? "unreadable" : intact && !saltRepaired ? "intact" : "repaired";
  const stoppedBecause = !intact && read.frames === 0 ? "not a journal segment" : read.stoppedBecause;
  if (header === "intact" && read.bytesSkipped === 0) return { ops: read.ops, frames: read.frames, end: read.end, stoppedBecause };
  // A file of a header alone with a damaged magic: nothing lost, but still not what was written.
  return { ops: read.ops, frames: read.frames, end: read.end, stoppedBecause, damage: { header, bytesSkipped: read.bytesSkipped, gaps: read.gaps } };
}

interface FramesRead {
  readonly ops: JournalOp[];
  readonly frames: number;
  readonly end: number;
  readonly stoppedBecause?: string;
  readonly bytesSkipped: number;
  readonly gaps: number;
}

function readFrames(file: Buffer, saltCrc: number): FramesRead {
  const ops: JournalOp[] = [];
  let frames = 0;
  let at = SEGMENT_HEADER_BYTES;
  let end = at;
  let lastNo = -1;
  let bytesSkipped = 0;
  let gaps = 0;
  let failure: string | undefined;
  while (at < file.length) {
    let frame = frameAt(file, at, saltCrc, lastNo + 1, lastNo + 1);
    if (typeof frame === "string") {
      failure = frame;
      const found = findFrame(file, at + 1, saltCrc, lastNo + 1);
      if (found === undefined) break;
      bytesSkipped += found.at - at;
      gaps++;
      frame = found.frame;
    }
    for (const op of frame.ops) ops.push(op);
    frames++;
    lastNo = frame.no;
    at = end = frame.next;
    failure = undefined;
  }
  if (end < file.length && !isTorn(file, end, failure)) {
    bytesSkipped += file.length - end;
    gaps++;
  }
  return { ops, frames, end, stoppedBecause: end < file.length ? failure : undefined, bytesSkipped, gaps };
}

/** What a crash leaves after the last frame: a frame cut short by the end of the file, or zeros. */
function isTorn(file: Buffer, end: number, failure: string | undefined): boolean {
  if (failure === SHORT_HEADER || failure === PAST_END) return true;
  for (let i = end; i < file.length; i++) if (file[i] !== 0) return false;
  return true;
}

const SHORT_HEADER = "short frame header";
const PAST_END = "short frame";

/** The frame at `at` when it is good and numbered within [minNo, maxNo]; else why not. */
interface Frame {
  readonly ops: JournalOp[];
  readonly no: number;
  readonly next: number;
}

function frameAt(file: Buffer, at: number, saltCrc: number, minNo: number, maxNo: number): Frame | string {
  if (file.length - at < FRAME_HEADER_BYTES) return SHORT_HEADER;
  const length = file.readUInt32LE(at);
  const no = file.readUInt32LE(at + 4);
  if (no < minNo || no > maxNo) return "frame out of sequence";
  if (length > MAX_FRAME_BYTES) return "frame length out of bounds";
  const next = at + FRAME_HEADER_BYTES + length;
  if (next > file.length) return PAST_END;
  const payload = file.subarray(at + FRAME_HEADER_BYTES, next);
  if (file.readUInt32LE(at + 8) !== frameChecksum(saltCrc, file.subarray(at, at + 8), payload)) return "checksum mismatch";
  const ops = parsePayload(payload, no);
  if (typeof ops === "string") return ops;
  return { ops, no, next };
}

/**
 * The next good frame from `from` on, numbered at least `minNo`. A frame numbered n has n
 * frames of at least a header each before it, which bounds n by its offset: most offsets fail
 * that test before any checksum is computed.
 */
function findFrame(file: Buffer, from: number, saltCrc: number, minNo: number): { at: number; frame: Frame } | undefined {
  for (let at = from; at + FRAME_HEADER_BYTES <= file.length; at++) {
    const maxNo = Math.floor((at - SEGMENT_HEADER_BYTES) / FRAME_HEADER_BYTES);
    if (maxNo < minNo) continue;
    const frame = frameAt(file, at, saltCrc, minNo, maxNo);
    if (typeof frame !== "string") return { at, frame };
  }
  return undefined;
}
