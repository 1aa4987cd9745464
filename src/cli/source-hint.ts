import type { HistoryStore } from "../store/history";

/** How many of the latest events are looked at for the sources they came from. */
const LOOKED_AT = 500;

/**
 * When `--source` matched nothing, the sources the latest events came from: a source is named
 * by its path without the leading "/" (`hooks/github`), which a first guess (`github`) misses.
 * Undefined when the source is among them (its events are just outside the other filters) or
 * the history holds no webhook event.
 */
export async function sourceHint(history: Pick<HistoryStore, "list">, source: string): Promise<string | undefined> {
  const page = await history.list({ limit: LOOKED_AT });
  const seen = [...new Set(page.events.flatMap((e) => (e.origin.kind === "webhook" ? [e.origin.source] : [])))].sort();
  if (seen.length === 0 || seen.includes(source)) return undefined;
  return `no event came from a source "${source}"; the latest events came from: ${seen.join(", ")} (a source is named by its path without the leading "/")`;
}
