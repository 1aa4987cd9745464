/** Plain-text table with a header row; columns padded to their widest cell. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** First line of `text`, cut to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  const first = text.split("\n")[0];
  return first.length <= max ? first : `${first.slice(0, max - 1)}…`;
}
