/** A copy without the keys whose value is undefined, so library defaults apply. */
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
