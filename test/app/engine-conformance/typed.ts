/** A value with the type of each leaf a JSON view would hide (a Date, a Buffer, NaN, an undefined property), as a task sees it. */
export function typed(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return { Buffer: value.toString("hex") };
  if (value instanceof Date) return { Date: value.getTime() };
  if (typeof value === "bigint") return { BigInt: String(value) };
  if (typeof value === "number" && !Number.isFinite(value)) return { number: String(value) };
  if (Object.is(value, -0)) return { number: "-0" };
  if (Array.isArray(value)) return value.map(typed);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: v === undefined ? "<undefined>" : typed(v), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return value;
}
