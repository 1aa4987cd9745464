import { Packr } from "msgpackr";
import { PAYLOAD_ENCODING } from "../../payload-codec";

/**
 * The history's values as MessagePack, written by hand: its records (SummaryRecord, an index
 * entry's time, counters) are arrays, strings, numbers and one Buffer, and a payload is mostly
 * plain objects, strings and numbers (anything else goes to msgpackr whole); msgpackr's general
 * encoder (its checks for every kind of value, its buffer management per value) was a sixth of
 * the history's main-thread time. The bytes are the MessagePack msgpackr writes for the same record (integers in the
 * smallest form, other numbers as float64, `undefined` as msgpackr's extension), but for maps
 * of fewer than 16 keys, written with the one-byte header where msgpackr always takes three:
 * a history written before reads the same, and reads decode with msgpackr.
 */

/** Bytes of a slab the encoded values are cut from: each stays untouched until lmdb has written it. */
const SLAB_BYTES = 256 * 1024;

let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
/** Where the value being encoded starts in `slab`, and where its next byte goes. */
let start = 0;
let pos = 0;

const fallback = new Packr(PAYLOAD_ENCODING);
/** Bins are copied out of lmdb's buffer, which it reuses for the next read. */
const decoder = new Packr({ ...PAYLOAD_ENCODING, copyBuffers: true });

/** A value of a kind a summary does not hold: the whole record goes to msgpackr. */
class Unexpected extends Error {}

/**
 * lmdb's `encoder` option for the history's databases, and the encoder of a payload's record.
 * An encoded value is a view into a slab no later value overwrites: it needs no copy.
 */
export const HISTORY_CODEC = {
  encode(value: unknown): Buffer {
    start = pos;
    try {
      any(value);
    } catch (error) {
      if (!(error instanceof Unexpected)) throw error;
      pos = start;
      return Buffer.from(fallback.pack(value));
    }
    return slab.subarray(start, pos);
  },
  decode(bytes: Uint8Array, options?: unknown): unknown {
    return decoder.unpack(bytes, options as number | undefined);
  },
};

/** Makes room for `n` more bytes, moving the value begun so far to a new slab when this one is full. */
function room(n: number): void {
  if (pos + n <= slab.length) return;
  const used = pos - start;
  const next = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, (used + n) * 2));
  slab.copy(next, 0, start, pos);
  slab = next;
  start = 0;
  pos = used;
}

function any(value: unknown): void {
  switch (typeof value) {
    case "string":
      return str(value);
    case "number":
      return num(value);
    case "boolean":
      room(1);
      slab[pos++] = value ? 0xc3 : 0xc2;
      return;
    case "undefined":
      room(3);
      slab[pos++] = 0xd4;
      slab[pos++] = 0;
      slab[pos++] = 0;
      return;
    case "object":
      if (value === null) {
        room(1);
        slab[pos++] = 0xc0;
        return;
      }
      if (Array.isArray(value)) return array(value);
      // A Buffer only: msgpackr writes other typed arrays as an extension of its own.
      if (Buffer.isBuffer(value)) return bin(value);
      if (Object.getPrototypeOf(value) === Object.prototype) return map(value as Record<string, unknown>);
      throw new Unexpected();
    default:
      throw new Unexpected();
  }
}

function str(s: string): void {
  const n = s.length;
  if (n < 32) {
    // Short ASCII (task names, ids, outcomes): a fixstr, written byte by byte.
    room(1 + n);
    let p = pos + 1;
    let ascii = true;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      slab[p++] = c;
    }
    if (ascii) {
      slab[pos] = 0xa0 | n;
      pos = p;
      return;
    }
  }
  const bytes = Buffer.byteLength(s, "utf8");
  room(5 + bytes);
  if (bytes < 32) slab[pos++] = 0xa0 | bytes;
  else if (bytes < 0x100) {
    slab[pos++] = 0xd9;
    slab[pos++] = bytes;
  } else if (bytes < 0x10000) {
    slab[pos++] = 0xda;
    slab.writeUInt16BE(bytes, pos);
    pos += 2;
  } else {
    slab[pos++] = 0xdb;
    slab.writeUInt32BE(bytes, pos);
    pos += 4;
  }
  pos += slab.write(s, pos, bytes, "utf8");
}

function num(v: number): void {
  room(9);
  if (v >>> 0 === v) {
    if (v < 0x80) slab[pos++] = v;
    else if (v < 0x100) {
      slab[pos++] = 0xcc;
      slab[pos++] = v;
    } else if (v < 0x10000) {
      slab[pos++] = 0xcd;
      slab.writeUInt16BE(v, pos);
      pos += 2;
    } else {
      slab[pos++] = 0xce;
      slab.writeUInt32BE(v, pos);
      pos += 4;
    }
  } else if (v >> 0 === v) {
    if (v >= -0x20) slab[pos++] = v & 0xff;
    else if (v >= -0x80) {
      slab[pos++] = 0xd0;
      slab.writeInt8(v, pos);
      pos += 1;
    } else if (v >= -0x8000) {
      slab[pos++] = 0xd1;
      slab.writeInt16BE(v, pos);
      pos += 2;
    } else {
      slab[pos++] = 0xd2;
      slab.writeInt32BE(v, pos);
      pos += 4;
    }
  } else {
    slab[pos++] = 0xcb;
    slab.writeDoubleBE(v, pos);
    pos += 8;
  }
}

function header(n: number, fix: number, fixLimit: number, x16: number, x32: number): void {
  room(5);
  if (n < fixLimit) slab[pos++] = fix | n;
  else if (n < 0x10000) {
    slab[pos++] = x16;
    slab.writeUInt16BE(n, pos);
    pos += 2;
  } else {
    slab[pos++] = x32;
    slab.writeUInt32BE(n, pos);
    pos += 4;
  }
}

function array(items: readonly unknown[]): void {
  header(items.length, 0x90, 16, 0xdc, 0xdd);
  for (let i = 0; i < items.length; i++) any(items[i]);
}

function map(object: Record<string, unknown>): void {
  const keys = Object.keys(object);
  header(keys.length, 0x80, 16, 0xde, 0xdf);
  for (const key of keys) {
    str(key);
    any(object[key]);
  }
}

function bin(bytes: Uint8Array): void {
  const n = bytes.length;
  room(5 + n);
  if (n < 0x100) {
    slab[pos++] = 0xc4;
    slab[pos++] = n;
  } else if (n < 0x10000) {
    slab[pos++] = 0xc5;
    slab.writeUInt16BE(n, pos);
    pos += 2;
  } else {
    slab[pos++] = 0xc6;
    slab.writeUInt32BE(n, pos);
    pos += 4;
  }
  slab.set(bytes, pos);
  pos += n;
}
