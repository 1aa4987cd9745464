import { randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";

/*
 * The journal's bytes on disk.
 *
 * A segment file is a 24-byte header followed by frames:
 *   header  "WTJ1" | u32 version | 8-byte salt | 8 bytes reserved
 *   frame   u32 payload length | u32 frame number | u32 checksum | payload
 * Frame numbers count from 0 in each segment. The checksum is CRC-32 of the salt, the length,
 * the frame number and the payload. The salt is random per segment, so bytes inside a webhook
 * body (chosen by whoever sends it) cannot pass for a frame. How a segment is read back, torn
 * or damaged, is in segment-reader.ts.
 *
 * A payload is a run of operations, all applied or (torn frame) none:
 *   enqueue  u8 1 | u8 flags (bit 0: has raw) | u16 queue length | u32 meta length |
 *            u32 raw length | f64 entry id | f64 sequence | queue | meta | raw
 *   done     u8 2 | f64 entry id
 * All integers little-endian. `meta` is the message without its raw bytes (MessagePack);
 * the raw request bytes follow as they are, so a 64 KiB body is copied once.
 */

export const SEGMENT_MAGIC = "WTJ1";
export const SEGMENT_VERSION = 1;
export const SEGMENT_HEADER_BYTES = 24;
export const FRAME_HEADER_BYTES = 12;

const OP_ENQUEUE = 1;
const OP_DONE = 2;
const ENQUEUE_HEADER_BYTES = 28;
const DONE_BYTES = 9;
const HAS_RAW = 1;

/** A frame can hold at most this many payload bytes (u32, and a sanity bound on reading). */
export const MAX_FRAME_BYTES = 1 << 30;

/** Checksum of a frame whose header (length, number) is `head` and payload `payload`. */
export function frameChecksum(saltCrc: number, head: Buffer, payload: Buffer): number {
  return crc32(payload, crc32(head, saltCrc));
}

export interface SegmentHeader {
  readonly salt: Buffer;
  /** CRC-32 of the salt: where every frame checksum of the segment starts. */
  readonly saltCrc: number;
}

export function newSegmentHeader(): { readonly bytes: Buffer; readonly header: SegmentHeader } {
  const bytes = Buffer.alloc(SEGMENT_HEADER_BYTES);
  bytes.write(SEGMENT_MAGIC, 0, "latin1");
  bytes.writeUInt32LE(SEGMENT_VERSION, 4);
  const salt = randomBytes(8);
  salt.copy(bytes, 8);
  return { bytes, header: { salt, saltCrc: crc32(salt) } };
}

/**
 * One frame, header and payload, in one buffer: the parts are copied once, so that the
 * checksum is one pass and the write one buffer.
 */
export function encodeFrame(segment: SegmentHeader, frameNo: number, parts: readonly Buffer[], length: number): Buffer {
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + length);
  frame.writeUInt32LE(length, 0);
  frame.writeUInt32LE(frameNo, 4);
  let at = FRAME_HEADER_BYTES;
  for (const part of parts) at += part.copy(frame, at);
  // Buffer.copy stops quietly at the end: a length that disagrees with the parts is a bug.
  if (at !== frame.length) throw new RangeError(`journal frame: parts hold ${at - FRAME_HEADER_BYTES} bytes, not ${length}`);
  const crc = frameChecksum(segment.saltCrc, frame.subarray(0, 8), frame.subarray(FRAME_HEADER_BYTES));
  frame.writeUInt32LE(crc, 8);
  return frame;
}

export interface EnqueueOp {
  readonly kind: "enqueue";
  /** Number of the frame it was read from (reading only). */
  readonly frame?: number;
  readonly entryId: number;
  readonly seq: number;
  readonly queue: string;
  readonly meta: Buffer;
  readonly raw: Buffer | undefined;
}

export interface DoneOp {
  readonly kind: "done";
  /** Number of the frame it was read from (reading only). */
  readonly frame?: number;
  readonly entryId: number;
}

export type JournalOp = EnqueueOp | DoneOp;

/** The buffers of an enqueue operation (header, queue, meta, raw), ready for writev. */
export function enqueueOp(entryId: number, seq: number, queue: string, meta: Buffer, raw: Buffer | undefined): Buffer[] {
  const queueBytes = queueNameBytes(queue);
  if (queueBytes.length > 0xffff) throw new RangeError(`queue name longer than 65535 bytes: ${queue.slice(0, 40)}...`);
  const head = Buffer.allocUnsafe(ENQUEUE_HEADER_BYTES);
  head.writeUInt8(OP_ENQUEUE, 0);
  head.writeUInt8(raw ? HAS_RAW : 0, 1);
  head.writeUInt16LE(queueBytes.length, 2);
  head.writeUInt32LE(meta.length, 4);
  head.writeUInt32LE(raw ? raw.length : 0, 8);
  head.writeDoubleLE(entryId, 12);
  head.writeDoubleLE(seq, 20);
  return raw && raw.length > 0 ? [head, queueBytes, meta, raw] : [head, queueBytes, meta];
}

/** Queue names are few and written with every message: encoded once each. */
const queueNames = new Map<string, Buffer>();

function queueNameBytes(queue: string): Buffer {
  let bytes = queueNames.get(queue);
  if (bytes) return bytes;
  bytes = Buffer.from(queue, "utf8");
  if (queueNames.size < 10_000) queueNames.set(queue, bytes);
  return bytes;
}

export function doneOp(entryId: number): Buffer {
  const op = Buffer.allocUnsafe(DONE_BYTES);
  op.writeUInt8(OP_DONE, 0);
  op.writeDoubleLE(entryId, 1);
  return op;
}

/** The operations of one frame's payload, or why it cannot be read. */
export function parsePayload(payload: Buffer, frame: number): JournalOp[] | string {
  const ops: JournalOp[] = [];
  let at = 0;
  while (at < payload.length) {
    const kind = payload.readUInt8(at);
    if (kind === OP_DONE) {
      if (payload.length - at < DONE_BYTES) return "truncated done operation";
      ops.push({ kind: "done", frame, entryId: payload.readDoubleLE(at + 1) });
      at += DONE_BYTES;
      continue;
    }
    if (kind !== OP_ENQUEUE) return `unknown operation ${kind}`;
    if (payload.length - at < ENQUEUE_HEADER_BYTES) return "truncated enqueue operation";
    const hasRaw = (payload.readUInt8(at + 1) & HAS_RAW) !== 0;
    const queueLength = payload.readUInt16LE(at + 2);
    const metaLength = payload.readUInt32LE(at + 4);
    const rawLength = payload.readUInt32LE(at + 8);
    const entryId = payload.readDoubleLE(at + 12);
    const seq = payload.readDoubleLE(at + 20);
    const queueAt = at + ENQUEUE_HEADER_BYTES;
    const metaAt = queueAt + queueLength;
    const rawAt = metaAt + metaLength;
    const next = rawAt + rawLength;
    if (next > payload.length) return "truncated enqueue operation";
    ops.push({
      kind: "enqueue",
      frame,
      entryId,
      seq,
      queue: payload.toString("utf8", queueAt, metaAt),
      meta: payload.subarray(metaAt, rawAt),
      raw: hasRaw ? payload.subarray(rawAt, next) : undefined,
    });
    at = next;
  }
  return ops;
}
