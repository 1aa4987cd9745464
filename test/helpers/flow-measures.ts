/** Measures of flow-control tests: overlaps per key, starts per window. */

export interface Span {
  key: string;
  n: number;
  start: number;
  end: number;
}

/** The most runs of one key that overlapped, per key (a start at the very moment of an end does not overlap). */
export function maxOverlapPerKey(spans: readonly Span[]): Map<string, number> {
  const byKey = new Map<string, Array<[number, number]>>();
  for (const s of spans) {
    let points = byKey.get(s.key);
    if (!points) byKey.set(s.key, (points = []));
    points.push([s.start, 1], [s.end, -1]);
  }
  const out = new Map<string, number>();
  for (const [key, points] of byKey) {
    points.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let open = 0;
    let max = 0;
    for (const [, d] of points) max = Math.max(max, (open += d));
    out.set(key, max);
  }
  return out;
}

/** The most starts inside any window of `periodMs`. */
export function maxStartsPerWindow(starts: readonly number[], periodMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let max = 0;
  let from = 0;
  for (let i = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[from]! >= periodMs) from++;
    max = Math.max(max, i - from + 1);
  }
  return max;
}

