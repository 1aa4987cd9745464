import { html, type Html } from "./html";

/** "2026-11-25 18:12:03Z": UTC, to the second; the script adds the reader's local time as a tooltip. */
export function timeText(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}

export function time(ms: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}">${timeText(ms)}</time>`;
}

/** "850 ms", "2.4 s", "3 min 5 s", "2 h 10 min". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1000)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A task's or queue's name: a long one wraps in its own narrow box, or it pushes every other column off-screen. */
export function longName(name: string): Html {
  return html`<span class="name">${name}</span>`;
}

/** A delivery status or run outcome as a coloured label (the class picks the colour). */
export function badge(word: string): Html {
  return html`<span class="badge badge-${word.replace(/[^a-z_]/g, "")}">${word.replace("_", " ")}</span>`;
}

/** A JSON value, indented; text that is not JSON stays as it is. */
export function pretty(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v), 2) ?? String(value);
  } catch {
    return String(value);
  }
}
