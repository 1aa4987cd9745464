/** Median of the finite values (NaN when there are none). */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function max(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? NaN : Math.max(...finite);
}

export function min(values: readonly number[]): number {
  const finite = values.filter(Number.isFinite);
  return finite.length === 0 ? NaN : Math.min(...finite);
}
