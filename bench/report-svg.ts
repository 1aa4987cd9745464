import { fmt, ms } from "./format";
import { TARGETS } from "./goals";
import type { BenchResults } from "./results";

/**
 * bench/results/chart.svg, drawn by hand: for every case, one bar per server for requests/s as
 * a ratio to bare node:http (left, goal line at the main case's received ÷ bare target) and for p99 latency (right, scaled per case).
 */
const COLORS: Record<string, string> = {
  "bare-node": "#4e79a7",
  "bare-express": "#bab0ac",
  "framework-received": "#59a14f",
  "framework-persisted": "#f28e2b",
  "framework-persisted-btree": "#e15759",
  "framework-postgres": "#76b7b2",
  "framework-postgres-x2": "#b07aa1",
  "framework-received-observed": "#8cd17d",
  pgboss: "#9c755f",
  "graphile-worker": "#ff9da7",
};

const GOAL = TARGETS.receivedVsBareEmit;

const WIDTH = 960;
const LEFT = { x: 20, width: 420 };
const RIGHT = { x: 510, width: 330 };
const BAR = 16;
const GAP = 4;
const HEADER = 22;
const GROUP_GAP = 16;

export function renderSvg(results: BenchResults): string {
  const parts: string[] = [];
  let y = 54;
  const servers = new Map<string, string>();
  for (const c of results.cases) for (const s of c.summary) servers.set(s.server, s.label);
  const maxRatio = Math.max(1.2, ...results.cases.flatMap((c) => c.summary.map((s) => (Number.isFinite(s.medianRatio) ? s.medianRatio : 0))));
  const ratioScale = (LEFT.width - 150) / maxRatio;

  parts.push(text(LEFT.x, 20, "requests/s ÷ bare node:http (median; whisker: range of rounds)", "title"));
  parts.push(text(RIGHT.x, 20, "p99 latency, ms (median; scaled per case)", "title"));
  let lx = LEFT.x;
  for (const [id, label] of servers) {
    parts.push(`<rect x="${lx}" y="32" width="12" height="12" fill="${COLORS[id] ?? "#999"}"/>`);
    parts.push(text(lx + 16, 42, label, "legend"));
    lx += 24 + label.length * 6.2;
  }
  y += 6;

  const background: string[] = [];
  for (const c of results.cases) {
    parts.push(text(LEFT.x, y + 14, c.case.title, "case"));
    y += HEADER;
    const barsTop = y - 2;
    const barsBottom = y + c.summary.length * (BAR + GAP) - GAP + 2;
    for (const value of [GOAL, 1]) {
      const x = (LEFT.x + value * ratioScale).toFixed(1);
      background.push(`<line x1="${x}" y1="${barsTop}" x2="${x}" y2="${barsBottom}" stroke="#555" stroke-dasharray="3,3" stroke-width="1"/>`);
    }
    const maxP99 = Math.max(...c.summary.map((s) => (Number.isFinite(s.medianP99Ms) ? s.medianP99Ms : 0)), 0.001);
    const p99Scale = (RIGHT.width - 70) / maxP99;
    for (const s of c.summary) {
      const color = COLORS[s.server] ?? "#999";
      const r = Number.isFinite(s.medianRatio) ? s.medianRatio : 0;
      const w = Math.max(1, r * ratioScale);
      parts.push(`<rect x="${LEFT.x}" y="${y}" width="${w.toFixed(1)}" height="${BAR}" fill="${color}"><title>${esc(s.label)}: ${fmt(s.medianRps)} req/s</title></rect>`);
      let labelX = LEFT.x + w + 6;
      if (Number.isFinite(s.minRatio) && Number.isFinite(s.maxRatio) && s.maxRatio > s.minRatio) {
        // whisker: the lowest to the highest per-round ratio
        const x1 = LEFT.x + s.minRatio * ratioScale;
        const x2 = LEFT.x + s.maxRatio * ratioScale;
        const cy = y + BAR / 2;
        parts.push(`<path d="M${x1.toFixed(1)} ${cy - 4}v8M${x1.toFixed(1)} ${cy}H${x2.toFixed(1)}M${x2.toFixed(1)} ${cy - 4}v8" stroke="#222" stroke-width="1" fill="none"/>`);
        labelX = Math.max(labelX, x2 + 6);
      }
      parts.push(text(labelX, y + 12, `${fmt(r, 2)}  (${fmt(s.medianRps)}/s)`, "value"));
      const p = Number.isFinite(s.medianP99Ms) ? s.medianP99Ms : 0;
      const pw = Math.max(1, p * p99Scale);
      parts.push(`<rect x="${RIGHT.x}" y="${y}" width="${pw.toFixed(1)}" height="${BAR}" fill="${color}"><title>${esc(s.label)}: p99 ${ms(p)} ms</title></rect>`);
      parts.push(text(RIGHT.x + pw + 6, y + 12, `${ms(p)} ms`, "value"));
      y += BAR + GAP;
    }
    y += GROUP_GAP;
  }
  const axisY = y - GROUP_GAP + 14;
  parts.push(`<text x="${(LEFT.x + GOAL * ratioScale - 3).toFixed(1)}" y="${axisY}" class="axis" text-anchor="end">goal ${GOAL}</text>`);
  parts.push(`<text x="${(LEFT.x + ratioScale + 3).toFixed(1)}" y="${axisY}" class="axis">1.0 = bare node:http</text>`);
  const m = results.machine;
  y += 10;
  parts.push(text(LEFT.x, y, `${m.cpu}, ${m.cores} cores, Node ${m.node}; ${results.settings.rounds} rounds × ${results.settings.seconds} s, ${results.settings.connections} connections; server on core 0, load on core 1`, "axis"));
  const height = y + 12;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<style>.title{font-size:13px;font-weight:bold}.legend{font-size:11px}.case{font-size:12px;font-weight:bold}.value{font-size:11px;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}.axis{font-size:10px;fill:#555}</style>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...background,
    ...parts,
    `</svg>`,
    "",
  ].join("\n");
}

function text(x: number, y: number, content: string, cls: string): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" class="${cls}">${esc(content)}</text>`;
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
