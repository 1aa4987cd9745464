/** Deeper values are not looked into (and not taken): JSON.stringify would recurse as deep. */
const MAX_DEPTH = 64;

/**
 * Whether `JSON.parse(JSON.stringify(value))` gives back `value` exactly: strings (any, lone
 * surrogates and U+0000 included, as JSON escapes them), finite numbers but -0, booleans,
 * null, dense arrays and plain objects of those, with no undefined value and no symbol key.
 * A JSON text is one string for the garbage collector to move, where a copy of the value is
 * an object per value: what holds many values for long keeps the text when this says so.
 */
export function readsBackFromJson(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && (value !== 0 || 1 / value > 0);
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth === MAX_DEPTH) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const array = value as unknown[];
    for (let i = 0; i < array.length; i++) {
      const item = array[i];
      // A hole reads as undefined, and JSON writes it null.
      if (item === undefined || !readsBackFromJson(item, depth + 1)) return false;
    }
    return true;
  }
  if (proto !== Object.prototype) return false;
  const object = value as Record<string, unknown>;
  for (const key in object) {
    const item = object[key];
    // JSON leaves out a key whose value is undefined: not the same object.
    if (item === undefined || !readsBackFromJson(item, depth + 1)) return false;
  }
  return Object.getOwnPropertySymbols(object).length === 0;
}
