/**
 * Text a sender or a handler chose (a name, a text body, an error) with its control characters
 * (but tabs and line breaks) written as `\u001b`: printed as they are, they would drive the
 * reader's terminal.
 */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
