/*
 * PostgreSQL text columns refuse the character U+0000 (and a statement carrying one fails whole,
 * with every row of its batch). What may hold one is made storable here, before it reaches a
 * statement: error texts visibly, ordering keys reversibly.
 */

const NUL = "\u0000";
/** Marks an ordering key stored in its encoded form; a key that reads as such an encoding is encoded too, so no two keys meet. */
const ENCODED_KEY = "\u0001";

/** An error text as it can be stored: each U+0000 becomes the six visible characters `\u0000`. */
export function storableText(text: string): string;
export function storableText(text: string | undefined): string | undefined;
export function storableText(text: string | undefined): string | undefined {
  return text === undefined || !text.includes(NUL) ? text : text.replaceAll(NUL, "\\u0000");
}

/**
 * An ordering key as a text column holds it. Only equality matters to ordering, so a key with
 * U+0000 is stored as base64 of its UTF-8 bytes behind a marker; every other key is stored as
 * it is (rows written before this encoding read back unchanged, and keep their order with new
 * rows of the same key), unless it reads as such an encoding itself: then it is encoded too.
 */
export function storedKey(key: string): string {
  return needsEncoding(key) ? ENCODED_KEY + Buffer.from(key, "utf8").toString("base64") : key;
}

/** The ordering key a column holds, as it was given. */
export function keyFromStored(stored: string): string {
  return decoded(stored) ?? stored;
}

function needsEncoding(key: string): boolean {
  return key.includes(NUL) || decoded(key) !== undefined;
}

/**
 * The key `stored` is the encoding of, when it is exactly what storedKey makes of a key that
 * needs encoding; else undefined (an older version's key beginning with U+0001 is itself).
 */
function decoded(stored: string): string | undefined {
  if (!stored.startsWith(ENCODED_KEY)) return undefined;
  const base64 = stored.slice(ENCODED_KEY.length);
  const bytes = Buffer.from(base64, "base64");
  if (bytes.toString("base64") !== base64) return undefined;
  const key = bytes.toString("utf8");
  if (!Buffer.from(key, "utf8").equals(bytes)) return undefined;
  return needsEncoding(key) ? key : undefined;
}
