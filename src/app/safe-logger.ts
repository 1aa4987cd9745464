import type { LogFields, Logger, LogFn } from "../util/logger";
import { shelterReserved } from "../util/logger";

/** Fields the framework puts on every line of a task run; a handler's fields cannot replace them. */
export const RESERVED_FIELDS: readonly string[] = ["level", "time", "msg", "pid", "hostname", "app", "task", "eventId", "attempt"];

type Level = "debug" | "info" | "warn" | "error";
const LEVELS: readonly Level[] = ["debug", "info", "warn", "error"];

/**
 * The logger a handler gets (`ctx.logger`): a log call never throws into the handler (a
 * throwing getter, an object the logger cannot serialise), and fields named like the line's
 * own keys (app, task, eventId, attempt, msg, level, ...) are moved under `fields`.
 */
export function safeLogger(inner: Logger, reserved: readonly string[] = RESERVED_FIELDS): Logger {
  const logger = {} as { -readonly [K in keyof Logger]: Logger[K] };
  for (const level of LEVELS) logger[level] = safeLevel(inner, level, reserved);
  logger.child = (bindings: LogFields): Logger => {
    try {
      return safeLogger(inner.child(shelterReserved(bindings, reserved)), reserved);
    } catch {
      return safeLogger(inner, reserved);
    }
  };
  return logger;
}

function safeLevel(inner: Logger, level: Level, reserved: readonly string[]): LogFn {
  return ((fields: unknown, message?: string): void => {
    try {
      if (typeof fields === "object" && fields !== null && !(fields instanceof Error)) {
        inner[level](shelterReserved(fields as Record<string, unknown>, reserved), message);
      } else if (fields instanceof Error) {
        inner[level]({ err: fields }, message);
      } else {
        inner[level](String(fields));
      }
    } catch (error) {
      // The line could not be written as given: write what can be, and go on.
      try {
        inner[level]({ logError: error instanceof Error ? error.message : String(error) }, typeof message === "string" ? message : typeof fields === "string" ? fields : "log line could not be written");
      } catch {
        // Nothing more to do: a log call must not fail the handler.
      }
    }
  }) as LogFn;
}
