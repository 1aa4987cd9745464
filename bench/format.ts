/** Number formatting shared by the reports. */
export const MiB = 2 ** 20;

export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return "–";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function mib(bytes: number): string {
  return Number.isFinite(bytes) ? `${fmt(bytes / MiB, 1)} MiB` : "–";
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return "–";
  return value < 10 ? fmt(value, 2) : value < 100 ? fmt(value, 1) : fmt(value, 0);
}

export function ratio(value: number): string {
  return Number.isFinite(value) ? fmt(value, 2) : "–";
}

export function pct(value: number): string {
  return Number.isFinite(value) ? `${fmt(value * 100, 0)}%` : "–";
}
