export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** One JSON object a line on stderr: easy to read, easy to ship to a log collector. */
export function createConsoleLogger(level: LogLevel = "info", base: LogFields = {}): Logger {
  const min = RANK[level];
  const write = (lvl: Exclude<LogLevel, "silent">) => (message: string, fields?: LogFields) => {
    if (RANK[lvl] < min) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg: message, ...base, ...fields })}\n`);
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
