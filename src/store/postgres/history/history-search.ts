/** What a search text asks for: a body field equal to a value, or an id or header value. */
export type HistorySearch =
  | { readonly kind: "field"; readonly text: string; readonly path: readonly string[]; readonly value: string; readonly candidates: readonly string[] }
  | { readonly kind: "text"; readonly text: string };

/** `a.b.c=value`: a dotted path of plain names and indexes, then `=`. */
const FIELD = /^([^.=\s]+(?:\.[^.=\s]+)*)=([\s\S]*)$/;

/**
 * Parses a search. A field search also carries `candidates`: JSON documents one of which the
 * body contains whenever the field matches (the value as a string, or as the number, boolean
 * or null it spells), so that the body's GIN index narrows the rows before `#>>` decides. A
 * path with an index in it (`commits.0.id`) has none: containment cannot say "element 0".
 */
export function parseSearch(text: string): HistorySearch {
  const match = FIELD.exec(text);
  if (!match) return { kind: "text", text };
  const path = match[1].split(".");
  const value = match[2];
  if (path.some((part) => /^\d+$/.test(part))) return { kind: "field", text, path, value, candidates: [] };
  const leaves: unknown[] = [value];
  const literal = jsonLiteral(value);
  if (literal !== undefined) leaves.push(literal);
  const candidates = leaves.map((leaf) => JSON.stringify(path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), leaf)));
  return { kind: "field", text, path, value, candidates };
}

/** The number or boolean `value` spells exactly as `#>>` would print it back, else undefined. */
function jsonLiteral(value: string): unknown {
  if (value === "true") return true;
  if (value === "false") return false;
  if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(value)) {
    const n = Number(value);
    if (Number.isFinite(n)) return n;
  }
  return undefined;
}
