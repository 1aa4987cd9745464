import { Packr } from "msgpackr";
import { NOT_PLAIN, plainCopy } from "./plain-data";
import { setOwnKey } from "../util/own-key";

/**
 * How values are written by every engine that writes them out: MessagePack (msgpackr) as plain
 * maps. msgpackr's record extension (its default) writes each new set of keys as an inline
 * definition, and webhook headers differ from one request to the next: plain maps encode in
 * about half the time at the same size. Readers understand both forms.
 */
export const PAYLOAD_ENCODING = { useRecords: false } as const;

const packr = new Packr(PAYLOAD_ENCODING);
/** Reads maps as Maps: msgpackr renames a `__proto__` key to `__proto_` when it reads a map into an object. */
const asMaps = new Packr({ ...PAYLOAD_ENCODING, mapsAsObjects: false });
const PROTO = Buffer.from("__proto__");

/** A value a task emitted that no engine can store; `path` names the bad part, from `result`. */
export class UnstorableValueError extends TypeError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = "UnstorableValueError";
  }
}

/**
 * Checks that `value` can be stored, and returns it as any engine hands it back: the value
 * encoded and decoded. The memory store keeps this form too, so what a task receives does not
 * depend on the engine or on a restart (a Map arrives as a plain object everywhere, not only
 * after the process restarted). Throws UnstorableValueError naming the first bad part.
 */
export function storedForm(value: unknown, root = "result"): unknown {
  return decodePayload(encodePayload(value, root));
}

/**
 * storedForm for what a task emits: plain data, which would come back equal, is copied in one
 * walk (see plainCopy) instead of being encoded and decoded; anything else takes storedForm.
 */
export function handedOnForm(value: unknown, root = "result"): unknown {
  const copied = plainCopy(value);
  return copied === NOT_PLAIN ? storedForm(value, root) : copied;
}

/**
 * handedOnForm for a value that must stay as it was received (a replay's payload, the memory
 * history's copy of an event): plain data is copied exactly, strings with a lone surrogate
 * included (the codec would write those as UTF-8, which has none); anything else takes storedForm.
 */
export function exactForm(value: unknown, root = "payload"): unknown {
  const copied = plainCopy(value, true);
  return copied === NOT_PLAIN ? storedForm(value, root) : copied;
}

/** The bytes of a value (checked first, see storedForm); a copy the caller may keep. */
export function encodePayload(value: unknown, root = "result"): Buffer {
  checkStorable(value, root);
  // msgpackr hands back a view into a buffer it reuses for the next values: copied.
  return Buffer.from(packr.pack(value));
}

export function decodePayload(bytes: Buffer): unknown {
  return unpackKeepingProto(bytes, (b) => packr.unpack(b));
}

/**
 * Decodes a payload so that a `__proto__` key (a query string or a JSON body may hold one)
 * comes back as the own property it was, instead of msgpackr's `__proto_` (and never as a
 * changed prototype). Only payloads whose bytes hold the name take the slower way.
 * `maps`: the decoder that reads maps as Maps, for a caller whose decoder has options of its own.
 */
export function unpackKeepingProto<B extends Uint8Array>(bytes: B, unpack: (bytes: B) => unknown, maps: Packr = asMaps): unknown {
  // The value's own bytes only (`length`): lmdb hands out views of one large read buffer.
  if (!Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).includes(PROTO)) return unpack(bytes);
  return plainFromMaps(maps.unpack(bytes));
}

/** Maps as plain objects (as the fast way reads them), every key an own data property. */
function plainFromMaps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainFromMaps);
  if (!(value instanceof Map)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of value) {
    setOwnKey(out, String(key), plainFromMaps(item));
  }
  return out;
}

/**
 * The deepest nesting of arrays, objects, maps and sets a stored value may have. MessagePack
 * encodes recursively and runs out of stack a little past 1,000 levels; a value nested deeper
 * than this is refused with a clear error rather than a RangeError from deep inside a write.
 */
export const MAX_STORED_DEPTH = 512;

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

/** Throws UnstorableValueError for the first part of `value` that cannot be stored. */
export function checkStorable(value: unknown, root = "result"): void {
  walk(value, root, new Map());
}

/** `ancestors`: the objects on the way from the root to here, and where they are (a cycle returns to one). */
function walk(value: unknown, path: string, ancestors: Map<object, string>): void {
  switch (typeof value) {
    case "function":
      throw new UnstorableValueError(path, "a function cannot be stored");
    case "symbol":
      throw new UnstorableValueError(path, "a symbol cannot be stored");
    case "bigint":
      if (value < INT64_MIN || value > UINT64_MAX) throw new UnstorableValueError(path, "a BigInt outside 64 bits cannot be stored (store it as a string)");
      return;
    case "object":
      break;
    default:
      return;
  }
  if (value === null || value instanceof Date || Buffer.isBuffer(value) || value instanceof ArrayBuffer) return;
  if (value instanceof Uint8Array) return;
  if (ArrayBuffer.isView(value)) {
    throw new UnstorableValueError(path, `a ${value.constructor.name} cannot be stored (use a Buffer of its bytes, or an array of numbers)`);
  }
  if (value instanceof Promise) throw new UnstorableValueError(path, "a Promise cannot be stored (await it first)");
  if (value instanceof WeakMap || value instanceof WeakSet) throw new UnstorableValueError(path, `a ${value.constructor.name} cannot be stored`);
  if (ancestors.size >= MAX_STORED_DEPTH) {
    throw new UnstorableValueError(path.length > 80 ? `${path.slice(0, 80)}…` : path, `a value nested deeper than ${MAX_STORED_DEPTH} levels cannot be stored`);
  }
  const seenAt = ancestors.get(value);
  if (seenAt !== undefined) throw new UnstorableValueError(path, `a circular reference (back to ${seenAt}) cannot be stored`);
  ancestors.set(value, path);
  if (Array.isArray(value)) {
    value.forEach((item: unknown, i) => walk(item, `${path}[${i}]`, ancestors));
  } else if (value instanceof Map) {
    for (const [key, item] of value) {
      const at = `${path}.get(${typeof key === "string" ? JSON.stringify(key) : String(key)})`;
      if (typeof key !== "string" && typeof key !== "number") {
        throw new UnstorableValueError(at, "a Map key that is not a string or a number cannot be stored");
      }
      walk(item, at, ancestors);
    }
  } else if (value instanceof Set) {
    let i = 0;
    for (const item of value) walk(item, `${path}.values()[${i++}]`, ancestors);
  } else {
    for (const key of Object.keys(value)) walk((value as Record<string, unknown>)[key], propertyPath(path, key), ancestors);
  }
  ancestors.delete(value);
}

function propertyPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
