/** Where a page ended: the last event's time and id (ties on time are ordered by id). */
export interface HistoryCursor {
  readonly receivedAt: number;
  readonly id: string;
}

/** Opaque to callers: base64url of `[receivedAt, id]`. */
export function encodeCursor(cursor: HistoryCursor): string {
  return Buffer.from(JSON.stringify([cursor.receivedAt, cursor.id]), "utf8").toString("base64url");
}

/** The cursor a `next` holds; a clear error for anything else. */
export function decodeCursor(text: string): HistoryCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== "number" || !Number.isFinite(parsed[0]) || typeof parsed[1] !== "string") {
    throw new TypeError(`history: invalid cursor ${JSON.stringify(text)} (pass the "next" of a previous page)`);
  }
  return { receivedAt: parsed[0], id: parsed[1] };
}
