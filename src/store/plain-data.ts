/** Deeper than this is taken as not plain (a cycle, or data deep enough to be worth the full check). */
const MAX_DEPTH = 64;

/**
 * True when `value` would come back from the payload codec equal to itself, so that a copy made
 * by encoding and decoding it would only cost: strings (well-formed UTF-16), numbers other than
 * -0, booleans, null, arrays without holes or undefined, and objects whose prototype is
 * Object.prototype with well-formed string keys other than "__proto__" (undefined values kept), all of
 * them extensible (not frozen, sealed or made non-extensible: no engine gives those back), each
 * object reached once (the codec makes two copies of one reached twice). One pass; anything
 * else (a Date, a Buffer, a Map, a class instance, a cycle) answers false and takes the full
 * check and copy.
 */
export function isPlainData(value: unknown): boolean {
  return plain(value, 0, new Walk());
}

/** The objects met so far below the root; made only for a value that nests objects. */
class Walk {
  seen: Set<object> | undefined;
}

function plain(value: unknown, depth: number, walk: Walk): boolean {
  switch (typeof value) {
    case "string":
      return (value as unknown as WellFormed).isWellFormed();
    case "number":
      return value !== 0 || 1 / value > 0;
    case "boolean":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth === MAX_DEPTH) return false;
  // A frozen, sealed or non-extensible object comes back from every engine as one the next task may change.
  if (!Object.isExtensible(value)) return false;
  if (depth > 0) {
    const seen = (walk.seen ??= new Set());
    if (seen.has(value)) return false;
    seen.add(value);
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const array = value as unknown[];
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      // A hole or undefined reads back as undefined in a dense array: not the same array.
      if (item === undefined || !plain(item, depth + 1, walk)) return false;
    }
    return true;
  }
  if (proto !== Object.prototype) return false;
  const object = value as Record<string, unknown>;
  for (const key in object) {
    // The codec renames an own "__proto__" key, which JSON.parse can make.
    if (key === "__proto__") return false;
    // MessagePack writes keys as UTF-8 too: a lone surrogate comes back as U+FFFD.
    if (!(key as unknown as WellFormed).isWellFormed()) return false;
    const item = object[key];
    if (item !== undefined && !plain(item, depth + 1, walk)) return false;
  }
  // Symbol keys are left out by the codec.
  return Object.getOwnPropertySymbols(object).length === 0;
}

/** String.prototype.isWellFormed (Node 20; the ES2022 lib does not declare it). */
interface WellFormed {
  isWellFormed(): boolean;
}
