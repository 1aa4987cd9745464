/**
 * JSON.stringify's replacer for what the CLI prints: bytes as `{ base64 }` instead of a list of
 * numbers, a BigInt (a stored value may hold one) as its decimal text, as the console shows them.
 * Bytes are told by the value itself (`this[key]`), not by what toJSON made of it: a body that
 * is `{ "type": "Buffer", "data": [...] }` prints as it is.
 */
export function printableReplacer(this: unknown, key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  const original = (this as Record<string, unknown>)[key];
  if (original instanceof Uint8Array) return { base64: Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString("base64") };
  return value;
}
