import { crc32 } from "node:zlib";
import { FRAME_HEADER_BYTES, frameChecksum, SEGMENT_HEADER_BYTES } from "./journal-format";

/** Frames longer than this are not used to work out a salt (it costs 33 checksums of the frame). */
const MAX_SOLVE_FRAME = 1 << 20;

interface FramePlace {
  readonly at: number;
  readonly length: number;
}

/**
 * Works out where a segment's frame checksums start (the CRC-32 of its salt) when its header is
 * damaged. A frame's checksum continues a CRC-32 from that value over the frame's header and
 * payload, and CRC-32 is affine over GF(2) in the value it starts from: one frame gives 32
 * equations in 32 unknowns, with one solution. The frames are found by their structure alone
 * (a length, then numbers 0, 1, 2, ... in sequence from the header on), so they must sit at
 * the start of the file.
 *
 * A value worked out from one frame always fits that frame: it is trusted when another frame
 * passes with it, or when it is the CRC-32 of the damaged salt with one byte changed (a segment
 * of a single frame). Otherwise undefined: no frame of the segment can be checked.
 */
export function recoverSaltCrc(file: Buffer, damagedSalt: Buffer): number | undefined {
  const frames = framesByStructure(file, 3);
  for (const frame of frames) {
    const start = solveStart(file, frame);
    if (start === undefined) continue;
    if (frames.some((other) => other !== frame && passes(file, other, start))) return start;
    if (oneByteFrom(damagedSalt, start)) return start;
  }
  return undefined;
}

function framesByStructure(file: Buffer, limit: number): FramePlace[] {
  const out: FramePlace[] = [];
  let at = SEGMENT_HEADER_BYTES;
  for (let no = 0; out.length < limit && at + FRAME_HEADER_BYTES <= file.length; no++) {
    const length = file.readUInt32LE(at);
    if (file.readUInt32LE(at + 4) !== no || at + FRAME_HEADER_BYTES + length > file.length) break;
    if (length <= MAX_SOLVE_FRAME) out.push({ at, length });
    at += FRAME_HEADER_BYTES + length;
  }
  return out;
}

function checksumFrom(file: Buffer, frame: FramePlace, start: number): number {
  const payload = file.subarray(frame.at + FRAME_HEADER_BYTES, frame.at + FRAME_HEADER_BYTES + frame.length);
  return frameChecksum(start, file.subarray(frame.at, frame.at + 8), payload) >>> 0;
}

function passes(file: Buffer, frame: FramePlace, start: number): boolean {
  return checksumFrom(file, frame, start) === file.readUInt32LE(frame.at + 8);
}

/** Gauss-Jordan elimination over GF(2): the start value whose checksum of the frame is the one stored. */
function solveStart(file: Buffer, frame: FramePlace): number | undefined {
  const zero = checksumFrom(file, frame, 0);
  const columns: number[] = [];
  for (let bit = 0; bit < 32; bit++) columns.push((checksumFrom(file, frame, (1 << bit) >>> 0) ^ zero) >>> 0);
  const target = (file.readUInt32LE(frame.at + 8) ^ zero) >>> 0;
  // Row j: which start bits flip checksum bit j; its right-hand side is bit j of the target.
  const rows: Array<{ mask: number; rhs: number }> = [];
  for (let j = 0; j < 32; j++) {
    let mask = 0;
    for (let bit = 0; bit < 32; bit++) if ((columns[bit]! >>> j) & 1) mask |= 1 << bit;
    rows.push({ mask: mask >>> 0, rhs: (target >>> j) & 1 });
  }
  const pivots: Array<{ mask: number; rhs: number; bit: number }> = [];
  for (let bit = 0; bit < 32; bit++) {
    const b = (1 << bit) >>> 0;
    const index = rows.findIndex((row) => (row.mask & b) !== 0);
    if (index < 0) return undefined;
    const pivot = rows.splice(index, 1)[0]!;
    for (const row of [...rows, ...pivots]) {
      if ((row.mask & b) === 0) continue;
      row.mask = (row.mask ^ pivot.mask) >>> 0;
      row.rhs ^= pivot.rhs;
    }
    pivots.push({ ...pivot, bit });
  }
  let start = 0;
  for (const pivot of pivots) if (pivot.rhs) start |= 1 << pivot.bit;
  return start >>> 0;
}

/** Whether `start` is the CRC-32 of `salt` with at most one byte changed. */
function oneByteFrom(salt: Buffer, start: number): boolean {
  const candidate = Buffer.from(salt);
  for (let i = 0; i < candidate.length; i++) {
    for (let value = 0; value < 256; value++) {
      candidate[i] = value;
      if (crc32(candidate) === start) return true;
    }
    candidate[i] = salt[i]!;
  }
  return false;
}
