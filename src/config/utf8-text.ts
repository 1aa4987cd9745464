import { isUtf8 } from "node:buffer";

export type Utf8Result = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly line: number; readonly message: string };

/**
 * The file's bytes as UTF-8 text. Bytes that are not UTF-8 are refused with their line: read
 * as U+FFFD, a Latin-1 secret would pass every check and then match no signature.
 */
export function utf8Text(bytes: Buffer): Utf8Result {
  if (isUtf8(bytes)) return { ok: true, text: bytes.toString("utf8") };
  const utf16 = bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
  if (utf16) return { ok: false, line: 1, message: "the file is not valid UTF-8 (it looks like UTF-16): save it as UTF-8" };
  const offset = firstInvalidByte(bytes);
  let line = 1;
  for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
  const hex = bytes[offset].toString(16).padStart(2, "0");
  return { ok: false, line, message: `the file is not valid UTF-8 (byte 0x${hex} on this line; Latin-1 or another encoding?): save it as UTF-8` };
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence. */
function firstInvalidByte(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    if (length === 0) return i;
    i += length;
  }
  return bytes.length - 1;
}

function sequenceLength(bytes: Buffer, i: number): number {
  const b = bytes[i];
  const length = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (length <= 1) return length;
  if (i + length > bytes.length) return 0;
  return isUtf8(bytes.subarray(i, i + length)) ? length : 0;
}
