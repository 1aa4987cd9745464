/**
 * How deeply JSON text nests, checked before it is parsed. A body of 40 KB can nest 20,000
 * levels; V8 parses it, but every recursive step after it (MessagePack when it is stored as
 * a dead letter, a task walking it) runs out of stack. Such a body is refused at the door.
 */

const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether arrays and objects in `text` nest more than `max` levels (brackets inside strings do not count). */
export function jsonNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: to the next quote that no backslash escapes.
      for (i++; i < length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * jsonNestsDeeperThan over UTF-8 bytes, for a body read as UTF-8: the bytes of quotes,
 * backslashes and brackets never occur inside a multi-byte character, and indexing bytes runs
 * about twice as fast as charCodeAt on the decoded text.
 */
export function utf8JsonNestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  const length = bytes.length;
  for (let i = 0; i < length; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      for (i++; i < length; i++) {
        const s = bytes[i];
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}
