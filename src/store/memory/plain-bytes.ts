import { setOwnKey } from "../../util/own-key";
import type { RecordReader, RecordWriter } from "./record-bytes";

/**
 * Plain data as the memory history keeps it: exactly what `plainCopy(value, true)` copies (see
 * plain-data.ts), as bytes. Strings come back as they were, lone surrogates included; an
 * object's undefined values and own `__proto__` key too. Anything else (a Date, a Buffer, -0,
 * a hole, a class instance, deeper than 64 levels) is refused: the caller keeps a copy of it
 * as an object instead, as exactForm makes it.
 */

const UNDEFINED = 0;
const NULL = 1;
const FALSE = 2;
const TRUE = 3;
const NUMBER = 4;
const STRING = 5;
const ARRAY = 6;
const OBJECT = 7;

const MAX_DEPTH = 64;

/**
 * Writes `value`; false (with some bytes written, which the caller drops) when it is not plain
 * data. `skip`: a key of the value itself left out (a webhook body its raw bytes give back).
 */
export function writePlain(writer: RecordWriter, value: unknown, depth = 0, skip?: string): boolean {
  switch (typeof value) {
    case "string":
      writer.u8(STRING);
      writer.string(value);
      return true;
    case "number":
      if (value === 0 && 1 / value < 0) return false;
      writer.u8(NUMBER);
      writer.f64(value);
      return true;
    case "boolean":
      writer.u8(value ? TRUE : FALSE);
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) {
    writer.u8(NULL);
    return true;
  }
  if (depth === MAX_DEPTH || !Object.isExtensible(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const array = value as unknown[];
    writer.u8(ARRAY);
    writer.u32(array.length);
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      // A hole or undefined: not what plainCopy copies.
      if (item === undefined || !writePlain(writer, item, depth + 1)) return false;
    }
    return true;
  }
  if (proto !== Object.prototype || Object.getOwnPropertySymbols(value).length > 0) return false;
  const object = value as Record<string, unknown>;
  writer.u8(OBJECT);
  const countAt = writer.at;
  writer.u32(0);
  let count = 0;
  for (const key in object) {
    if (key === skip) continue;
    writer.string(key);
    const item = object[key];
    if (item === undefined) writer.u8(UNDEFINED);
    else if (!writePlain(writer, item, depth + 1)) return false;
    count++;
  }
  writer.patchU32(countAt, count);
  return true;
}

/** Reads what writePlain wrote: fresh objects at each call. */
export function readPlain(reader: RecordReader): unknown {
  switch (reader.u8()) {
    case UNDEFINED:
      return undefined;
    case NULL:
      return null;
    case FALSE:
      return false;
    case TRUE:
      return true;
    case NUMBER:
      return reader.f64();
    case STRING:
      return reader.string();
    case ARRAY: {
      const length = reader.u32();
      const array = new Array<unknown>(length);
      for (let i = 0; i < length; i++) array[i] = readPlain(reader);
      return array;
    }
    case OBJECT: {
      const object: Record<string, unknown> = {};
      for (let count = reader.u32(); count > 0; count--) {
        const key = reader.string()!;
        setOwnKey(object, key, readPlain(reader));
      }
      return object;
    }
    default:
      throw new Error("the memory history's record is damaged: an unknown value type");
  }
}
