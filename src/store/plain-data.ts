import { setOwnKey } from "../util/own-key";

/** Deeper than this is taken as not plain (a cycle, or data deep enough to be worth the full check). */
const MAX_DEPTH = 64;

/** What plainCopy answers for a value that is not plain data. */
export const NOT_PLAIN: unique symbol = Symbol("not plain data");

/**
 * A copy of `value` made in one walk when it is plain data, which the payload codec would give
 * back equal: strings (well-formed UTF-16), numbers other than -0, booleans, null, arrays
 * without holes or undefined, and objects whose prototype is Object.prototype with well-formed
 * string keys (undefined values kept; an own "__proto__" key, which JSON.parse and query strings
 * can make, stays an own property, as the codec reads it back), all of them extensible (no engine
 * gives back a frozen, sealed or non-extensible object). An object reached twice is copied
 * twice, as the codec does. Anything else (a Date, a Buffer, a Map, a class instance, a cycle)
 * answers NOT_PLAIN and takes the codec's full check and copy.
 *
 * `exact`: strings and keys with a lone surrogate are copied as they are, where the codec would
 * make them U+FFFD (a value that must stay as it was received: see exactForm).
 *
 * A copy, not the value itself: the task that returned it may keep it (a constant, a cache),
 * and the task that receives it may change it; neither must see the other's changes.
 */
export function plainCopy(value: unknown, exact = false): unknown {
  return copy(value, 0, exact);
}

function copy(value: unknown, depth: number, exact: boolean): unknown {
  switch (typeof value) {
    case "string":
      return exact || (value as unknown as WellFormed).isWellFormed() ? value : NOT_PLAIN;
    case "number":
      return value !== 0 || 1 / value > 0 ? value : NOT_PLAIN;
    case "boolean":
      return value;
    case "object":
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  if (depth === MAX_DEPTH || !Object.isExtensible(value)) return NOT_PLAIN;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const array = value as unknown[];
    const out = new Array<unknown>(array.length);
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      // A hole or undefined reads back as undefined in a dense array: not the same array.
      if (item === undefined) return NOT_PLAIN;
      const copied = copy(item, depth + 1, exact);
      if (copied === NOT_PLAIN) return NOT_PLAIN;
      out[i] = copied;
    }
    return out;
  }
  if (proto !== Object.prototype) return NOT_PLAIN;
  const object = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key in object) {
    // MessagePack writes keys as UTF-8 too: a lone surrogate comes back as U+FFFD.
    if (!exact && !(key as unknown as WellFormed).isWellFormed()) return NOT_PLAIN;
    const item = object[key];
    const copied = item === undefined ? undefined : copy(item, depth + 1, exact);
    if (copied === NOT_PLAIN) return NOT_PLAIN;
    setOwnKey(out, key, copied);
  }
  // Symbol keys are left out by the codec.
  return Object.getOwnPropertySymbols(object).length === 0 ? out : NOT_PLAIN;
}

/** String.prototype.isWellFormed (Node 20; the ES2022 lib does not declare it). */
interface WellFormed {
  isWellFormed(): boolean;
}
