import type { ActivityRow } from "../store/history";
import { html, trusted, type Html } from "./html";

const WIDTH = 720;
const HEIGHT = 120;
const PARTS = ["succeeded", "pending", "failed", "dead"] as const;

/**
 * The last hour as stacked bars, one per bucket: deliveries succeeded, pending, failed and dead
 * at the time of the page. Plain SVG drawn on the server: no script, no inline style (colours
 * come from classes in the stylesheet).
 */
export function activityChart(rows: readonly ActivityRow[], since: number, bucketMs: number, buckets: number): Html {
  const totals = Array.from({ length: buckets }, () => ({ succeeded: 0, pending: 0, failed: 0, dead: 0 }));
  for (const row of rows) {
    const index = Math.floor((row.bucketStart - since) / bucketMs);
    if (index < 0 || index >= buckets) continue;
    for (const part of PARTS) totals[index][part] += row[part];
  }
  const max = Math.max(1, ...totals.map((t) => t.succeeded + t.pending + t.failed + t.dead));
  const slot = WIDTH / buckets;
  const plot = HEIGHT;
  const bars: string[] = [];
  totals.forEach((t, i) => {
    let y = plot;
    const x = (i * slot + 1).toFixed(1);
    const width = Math.max(1, slot - 2).toFixed(1);
    // The last bar is the current bucket: 0 minutes ago, not 1.
    const minutesAgo = Math.round((buckets - 1 - i) * (bucketMs / 60_000));
    const ago = minutesAgo === 0 ? "this minute" : `${minutesAgo} min ago`;
    for (const part of PARTS) {
      if (t[part] === 0) continue;
      const h = (t[part] / max) * (plot - 4);
      y -= h;
      bars.push(`<rect class="bar-${part}" x="${x}" y="${y.toFixed(1)}" width="${width}" height="${h.toFixed(1)}"><title>${t[part]} ${part}, ${ago}</title></rect>`);
    }
  });
  const total = totals.reduce((sum, t) => sum + t.succeeded + t.pending + t.failed + t.dead, 0);
  // Stretched to the page's width: only rectangles inside, the labels are HTML below.
  const svg = trusted(
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" preserveAspectRatio="none" role="img" aria-label="Deliveries over the last hour: ${total}">` +
      `<line class="axis" x1="0" y1="${HEIGHT - 0.5}" x2="${WIDTH}" y2="${HEIGHT - 0.5}"/>` +
      bars.join("") +
      `</svg>`,
  );
  const minutes = Math.round(bucketMs / 60_000);
  const legend = PARTS.map((part) => html`<span class="key"><i class="swatch bar-${part}"></i>${part}</span>`);
  return html`<figure class="chart-box">
    <div class="chart-scale"><span>${total} in the last hour</span><span>highest bar: ${max} per ${minutes === 1 ? "minute" : `${minutes} minutes`}</span></div>
    ${svg}
    <div class="chart-scale"><span>${Math.round((buckets * bucketMs) / 60_000)} min ago</span><span>now</span></div>
    <figcaption>${legend}</figcaption>
  </figure>`;
}
