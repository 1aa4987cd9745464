/** About what a value takes in the heap: its strings' and Buffers' lengths, a fixed part for each value. */
export function valueBytes(value: unknown, depth = 0): number {
  if (typeof value === "string") return 16 + value.length;
  if (typeof value !== "object" || value === null) return 16;
  if (Buffer.isBuffer(value)) return 96 + value.length;
  // Deeper than the copy goes (it left such a value to the codec, or kept it as it was): counted without recursion.
  if (depth === MAX_COUNTED_DEPTH) return deepValueBytes(value);
  let bytes = 32;
  if (Array.isArray(value)) for (const item of value) bytes += 8 + valueBytes(item, depth + 1);
  else for (const key in value) bytes += 8 + key.length + valueBytes((value as Record<string, unknown>)[key], depth + 1);
  return bytes;
}

const MAX_COUNTED_DEPTH = 64;

/**
 * valueBytes of a value nested deeper than recursion should go (a value the codec could not
 * copy is kept as it was noted, however deep): walked with a stack, each object once.
 */
function deepValueBytes(root: object): number {
  let bytes = 0;
  const seen = new Set<object>();
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string") bytes += 16 + value.length;
    else if (typeof value !== "object" || value === null) bytes += 16;
    else if (Buffer.isBuffer(value)) bytes += 96 + value.length;
    else if (!seen.has(value)) {
      seen.add(value);
      bytes += 32;
      if (Array.isArray(value)) {
        for (const item of value) {
          bytes += 8;
          stack.push(item);
        }
      } else {
        for (const key in value) {
          bytes += 8 + key.length;
          stack.push((value as Record<string, unknown>)[key]);
        }
      }
    }
  }
  return bytes;
}
