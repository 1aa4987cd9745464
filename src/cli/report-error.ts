import { relative } from "node:path";
import { ConfigError } from "../config/config-error";
import { ListenError } from "../http/listener";
import type { Output } from "./output";
import { UsageError } from "./usage";

/**
 * Prints an error as one line per problem on stderr, never a stack trace (unless
 * WEBHOOK_TASKS_DEBUG is set), and returns the exit code: 2 for usage errors, 1 otherwise.
 */
export function reportError(error: unknown, output: Output): number {
  if (error instanceof UsageError) {
    output.err(`error: ${error.message}`);
    output.err("Run 'webhook-tasks --help' for usage.");
    return 2;
  }
  if (error instanceof ConfigError) {
    const display = error.file === undefined ? undefined : displayPath(error.file);
    for (const line of error.lines(display)) output.err(line);
    return 1;
  }
  if (error instanceof ListenError) {
    output.err(`error: ${error.message}`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  output.err(`error: ${message.split("\n").join(" ")}`);
  if (process.env.WEBHOOK_TASKS_DEBUG && error instanceof Error && error.stack) output.err(error.stack);
  return 1;
}

/** A file as the user most likely typed it: relative to the working directory when inside it. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.length > 0 && !rel.startsWith("..") ? rel : file;
}
