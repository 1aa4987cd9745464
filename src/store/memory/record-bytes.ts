/**
 * The byte form the memory history writes its records in: numbers as float64, strings exactly
 * (Latin-1 when every character fits, UTF-16 otherwise, lone surrogates included) behind a
 * header of their byte length and form, read back in the order written.
 */

/** A string's header for "none" (null). */
const NONE = 0xffffffff;
/** Longer strings are checked and copied natively; shorter ones by a loop, which is faster for them. */
const SHORT = 64;
const WIDE = /[^\u0000-\u00ff]/;
const FIRST_BYTES = 64 * 1024;
const KEPT_BYTES = 1024 * 1024;

/** Writes into a buffer of its own, grown as needed; `bytes()` is a view of what was written, until the next `reset`. */
export class RecordWriter {
  private buf = Buffer.allocUnsafeSlow(FIRST_BYTES);
  at = 0;

  reset(): void {
    this.at = 0;
    // Grown for a large record: not kept that large for the small ones after it.
    if (this.buf.length > KEPT_BYTES) this.buf = Buffer.allocUnsafeSlow(FIRST_BYTES);
  }

  /** What was written since `reset`: a view, valid until the next write. */
  bytes(): Buffer {
    return this.buf.subarray(0, this.at);
  }

  /** Copies what was written since `reset` into `target` at `targetAt`. */
  copyTo(target: Buffer, targetAt: number): void {
    this.buf.copy(target, targetAt, 0, this.at);
  }

  u8(value: number): void {
    if (this.at + 1 > this.buf.length) this.room(1);
    this.buf[this.at++] = value;
  }

  u32(value: number): void {
    if (this.at + 4 > this.buf.length) this.room(4);
    putU32(this.buf, this.at, value);
    this.at += 4;
  }

  f64(value: number): void {
    if (this.at + 8 > this.buf.length) this.room(8);
    // Through a float64 view, byte by byte: Buffer's writeDoubleLE checks its arguments first.
    F64[0] = value;
    const { buf, at } = this;
    for (let i = 0; i < 8; i++) buf[at + i] = F64_BYTES[i]!;
    this.at = at + 8;
  }

  /** Writes `value` over the four bytes at `at`, written before (a count known only later). */
  patchU32(at: number, value: number): void {
    putU32(this.buf, at, value);
  }

  copy(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }

  /** [u32 header: byte length × 2 + 1 when UTF-16][bytes]; null is a header alone. */
  string(value: string | null): void {
    if (value === null) return this.u32(NONE);
    const length = value.length;
    if (this.at + 4 + 2 * length > this.buf.length) this.room(4 + 2 * length);
    const buf = this.buf;
    const start = this.at + 4;
    if (length <= SHORT) {
      let i = 0;
      for (; i < length; i++) {
        const c = value.charCodeAt(i);
        if (c > 0xff) break;
        buf[start + i] = c;
      }
      if (i === length) return this.header(length * 2, start + length);
    } else if (!WIDE.test(value)) {
      buf.write(value, start, "latin1");
      return this.header(length * 2, start + length);
    }
    buf.write(value, start, "utf16le");
    this.header(length * 4 + 1, start + 2 * length);
  }

  private header(header: number, end: number): void {
    putU32(this.buf, this.at, header);
    this.at = end;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buf.length * 2, this.at + bytes));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }
}

/** Little-endian, by hand: Buffer's writeUInt32LE checks its arguments, at a cost on every string. */
function putU32(buf: Buffer, at: number, value: number): void {
  buf[at] = value;
  buf[at + 1] = value >>> 8;
  buf[at + 2] = value >>> 16;
  buf[at + 3] = value >>> 24;
}

/**
 * Buffer's own decoders, which `toString(encoding, start, end)` calls after checking its
 * arguments: called directly, a short string reads in half the time. (Node's typings leave them out.)
 */
interface NativeSlices {
  latin1Slice(start: number, end: number): string;
  ucs2Slice(start: number, end: number): string;
}

const F64 = new Float64Array(1);
const F64_BYTES = new Uint8Array(F64.buffer);

/** Reads fields in the order written, from `at` on. */
export class RecordReader {
  constructor(
    readonly buf: Buffer,
    public at: number,
  ) {}

  string(): string | null {
    const header = this.buf.readUInt32LE(this.at);
    this.at += 4;
    if (header === NONE) return null;
    const length = header >>> 1;
    const start = this.at;
    this.at += length;
    const slices = this.buf as unknown as NativeSlices;
    return (header & 1) === 1 ? slices.ucs2Slice(start, start + length) : slices.latin1Slice(start, start + length);
  }

  /** Moves past a string without reading it. */
  skipString(): void {
    const header = this.buf.readUInt32LE(this.at);
    this.at += header === NONE ? 4 : 4 + (header >>> 1);
  }

  u8(): number {
    return this.buf[this.at++]!;
  }

  u32(): number {
    const value = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return value;
  }

  f64(): number {
    // As written: in the machine's byte order.
    const { buf, at } = this;
    for (let i = 0; i < 8; i++) F64_BYTES[i] = buf[at + i]!;
    this.at = at + 8;
    return F64[0]!;
  }
}
