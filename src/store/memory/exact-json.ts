/** Nesting a value may have for its JSON text to be kept (deeper ones are copied instead). */
const MAX_DEPTH = 64;

/**
 * `value` as JSON text when parsing that text gives back exactly what copying it as plain data
 * (plainCopy) gives: the memory history keeps an emitted value as one flat string, whose length
 * is its size, instead of the objects and strings it is made of. The garbage collector copies
 * every object a history keeps once or twice before it settles in the old generation, and
 * never looks inside a string.
 *
 * Undefined for anything JSON would not give back as it was: undefined (dropped, or null in an
 * array), -0, NaN and the infinities, lone surrogates, an own "__proto__" key, symbol keys, a
 * frozen or sealed object, and anything not an array or a plain object (a Date, a Buffer, a Map).
 */
export function exactJson(value: unknown): string | undefined {
  if (!fits(value, 0)) return undefined;
  const text = JSON.stringify(value);
  // V8 hands the text back as a rope of the pieces it was built in; reading it as a number
  // (NaN) flattens it in place, so the history keeps one string instead of the rope.
  void Number(text);
  return text;
}

function fits(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
      return (value as unknown as WellFormed).isWellFormed();
    case "number":
      return Number.isFinite(value) && (value !== 0 || 1 / value > 0);
    case "boolean":
      return true;
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth === MAX_DEPTH || !Object.isExtensible(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const array = value as unknown[];
    for (let i = 0; i < array.length; i++) if (!fits(array[i], depth + 1)) return false;
    return true;
  }
  if (proto !== Object.prototype) return false;
  const object = value as Record<string, unknown>;
  for (const key in object) {
    if (key === "__proto__" || !(key as unknown as WellFormed).isWellFormed() || !fits(object[key], depth + 1)) return false;
  }
  return Object.getOwnPropertySymbols(object).length === 0;
}

/** String.prototype.isWellFormed (Node 20; the ES2022 lib does not declare it). */
interface WellFormed {
  isWellFormed(): boolean;
}
