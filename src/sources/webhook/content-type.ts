/**
 * The parts of a Content-Type header the parsers need. Parameters are read as RFC 9110 §5.6.6
 * writes them (`name=token` or `name="quoted string"`), so text inside another parameter's
 * quotes (`foo="charset=latin1"`) is never taken for a parameter of its own.
 */

/** The media type, lower-cased, without parameters ("" for an empty header). */
export function mediaType(contentType: string): string {
  const semi = contentType.indexOf(";");
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** The `charset` parameter, lower-cased; undefined when there is none. */
export function charsetOf(contentType: string): string | undefined {
  const semi = contentType.indexOf(";");
  if (semi === -1) return undefined;
  for (const [name, value] of parameters(contentType.slice(semi + 1))) {
    if (name === "charset") return value.toLowerCase();
  }
  return undefined;
}

/** The parameters after the media type, names lower-cased, in order; a malformed rest ends the list. */
function* parameters(text: string): Generator<[string, string]> {
  let i = 0;
  while (i < text.length) {
    while (i < text.length && (text[i] === ";" || text[i] === " " || text[i] === "\t")) i++;
    const eq = text.indexOf("=", i);
    if (eq === -1) return;
    const semi = text.indexOf(";", i);
    if (semi !== -1 && semi < eq) {
      i = semi; // a parameter without a value (not RFC 9110's, but sent): skipped, not glued to the next one's name
      continue;
    }
    const name = text.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    let value = "";
    if (text[i] === '"') {
      i++;
      while (i < text.length && text[i] !== '"') {
        if (text[i] === "\\" && i + 1 < text.length) i++;
        value += text[i++];
      }
      i++; // the closing quote
      const next = text.indexOf(";", i);
      i = next === -1 ? text.length : next;
    } else {
      const next = text.indexOf(";", i);
      value = text.slice(i, next === -1 ? text.length : next).trim();
      i = next === -1 ? text.length : next;
    }
    yield [name, value];
  }
}
