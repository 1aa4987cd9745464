/*
 * PostgreSQL text columns refuse the character U+0000 (and a statement carrying one fails whole,
 * with every row of its batch). What may hold one is made storable here, before it reaches a
 * statement: error texts visibly, ordering keys reversibly.
 */

const NUL = "\u0000";
/** Marks an ordering key stored in its encoded form; a key starting with it is encoded too, so no two keys meet. */
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
 * it is (rows written before this encoding read back unchanged).
 */
export function storedKey(key: string): string {
  if (!key.includes(NUL) && !key.startsWith(ENCODED_KEY)) return key;
  return ENCODED_KEY + Buffer.from(key, "utf8").toString("base64");
}

/** The ordering key a column holds, as it was given. */
export function keyFromStored(stored: string): string {
  if (!stored.startsWith(ENCODED_KEY)) return stored;
  return Buffer.from(stored.slice(ENCODED_KEY.length), "base64").toString("utf8");
}
