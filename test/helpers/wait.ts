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
export function recordingLogger(lines: LogLine[], bindings: Record<string, unknown> = {}): Logger {
  const keep = (first: object | string, msg?: string) =>
    void (typeof first === "string" ? lines.push({ msg: first, fields: { ...bindings } }) : lines.push({ msg: msg ?? "", fields: { ...bindings, ...first } }));
  return { debug: keep, info: keep, warn: keep, error: keep, child: (more) => recordingLogger(lines, { ...bindings, ...more }) };
}

/** The error `promise` rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}
