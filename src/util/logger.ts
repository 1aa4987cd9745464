import pino from "pino";
import { hostname } from "node:os";

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

/** Request headers that carry credentials or signatures: never written to a log line. */
export const SECRET_HEADERS: readonly string[] = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "x-hub-signature",
  "x-hub-signature-256",
  "x-gitlab-token",
  "stripe-signature",
  "x-slack-signature",
  "x-twilio-signature",
  "x-shopify-hmac-sha256",
  "x-zm-signature",
  "svix-signature",
  "webhook-signature",
  "x-signature",
  "x-webhook-signature",
];

/** Fields named like secrets, wherever they sit (up to two levels down). */
const SECRET_FIELDS = ["secret", "secrets", "password", "token", "apiKey", "signingSecret"];

/**
 * pino `redact` paths: the secret headers of any `headers` object (at the top of a line, or
 * one or two levels down, e.g. `event.headers`, `req.headers`), and secret-named fields.
 * Give them to your own pino logger to get the same redaction.
 */
export const REDACT_PATHS: readonly string[] = [
  ...["headers", "*.headers", "*.*.headers"].flatMap((at) => SECRET_HEADERS.map((name) => `${at}["${name}"]`)),
  ...SECRET_FIELDS.flatMap((name) => [name, `*.${name}`, `*.*.${name}`]),
];

/** Keys pino writes itself; a field of the same name would make a second, conflicting key. */
const CORE_KEYS = ["level", "time", "msg", "pid", "hostname"];

/**
 * The default: pino, one JSON object a line on stdout. Errors under `err` or `error` are
 * written with type, message and stack; secret headers and fields are redacted; a user field
 * named like one of pino's own keys is moved under `fields` rather than overwrite it.
 */
export function createDefaultLogger(level: LogLevel = "info", base: LogFields = {}, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    // pino's own base (pid, hostname) is replaced by a given one: kept, so replicas' lines tell apart.
    base: { pid: process.pid, hostname: hostname(), ...base },
    redact: { paths: [...REDACT_PATHS], censor: "[redacted]" },
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    formatters: { log: (fields) => shelterReserved(fields, CORE_KEYS) },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/**
 * Moves the fields named in `reserved` under `fields`, so they cannot overwrite the line's own
 * keys; returns the object itself when none is present (the common case costs a few lookups).
 */
export function shelterReserved(fields: Record<string, unknown>, reserved: readonly string[]): Record<string, unknown> {
  let moved: Record<string, unknown> | undefined;
  for (const key of reserved) {
    if (Object.prototype.hasOwnProperty.call(fields, key)) (moved ??= {})[key] = fields[key];
  }
  if (moved === undefined) return fields;
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) if (!(key in moved)) rest[key] = fields[key];
  const nested = rest.fields;
  rest.fields = typeof nested === "object" && nested !== null && !Array.isArray(nested) ? { ...nested, ...moved } : nested === undefined ? moved : { fields: nested, ...moved };
  return rest;
}

const noop = (): void => undefined;

/** A logger that writes nothing (tests, tools). */
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => silentLogger };

/**
 * A thrown value's message, always text: a handler may throw an Error whose message is not a
 * string, or a value String() cannot convert (an object without a prototype). Throwing here
 * would leave the run's outcome unrecorded and its event claimed for ever.
 */
export function errorMessage(error: unknown): string {
  try {
    const message = error instanceof Error ? error.message : error;
    return typeof message === "string" ? message : String(message);
  } catch {
    return Object.prototype.toString.call(error);
  }
}
