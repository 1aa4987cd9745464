import pino from "pino";

/** pino's level names, plus "silent". */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";
export type LogFields = Record<string, unknown>;

export const LOG_LEVELS: readonly LogLevel[] = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/** One level method, as pino has it: fields first, then the message; or a message alone. */
export interface LogFn {
  (fields: object, message?: string): void;
  (message: string): void;
}

/**
 * What the framework logs through: a pino logger, or anything with pino's level methods and
 * `child`. Fields come first, the message second, as in pino.
 */
export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  child(bindings: LogFields): Logger;
}

/** The default: pino, one JSON object a line on stdout. */
export function createDefaultLogger(level: LogLevel = "info", base: LogFields = {}): Logger {
  return pino({ level, base });
}

const noop = (): void => undefined;

/** A logger that writes nothing (tests, tools). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => silentLogger };

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
