import type { Logger } from "../../src/index";

/** Resolves once `predicate` holds, polling every 5 ms; fails the test after `ms`. */
export async function until(predicate: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await predicate())) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export interface LogLine {
  msg: string;
  fields?: Record<string, unknown>;
}

/** A logger that keeps its lines, so a test can see what tasks did. */
export function recordingLogger(lines: LogLine[]): Logger {
  const keep = (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, fields });
  return { debug: keep, info: keep, warn: keep, error: keep };
}
