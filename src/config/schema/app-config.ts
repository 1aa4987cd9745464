import { LOG_LEVELS, type LogLevel } from "../../util/logger";
import { DEFAULT_STORE } from "../../app/core-app";
import { Flag, FlagOrSection, Integer, OneOf, Optional, Section, StoreSetting, SwitchOrSection, Text, TrustProxySetting } from "./rules";
import type { PostgresUrl } from "../../store/postgres/postgres-options";
import { ConsoleConfig } from "./console-config";

export const STORE_ENGINES = ["memory", "embedded"] as const;
export type StoreEngine = (typeof STORE_ENGINES)[number];
/** CoreApp's default store, which the CLI opens when `app.store` is not given. */
export const DEFAULT_STORE_ENGINE: StoreEngine = DEFAULT_STORE;
/** It names the data directory: "." or ".." would name `.data` itself or the project's own directory. */
export const APP_NAME = /^(?!\.+$)[A-Za-z0-9_.-]{1,100}$/;

/** `app.http`: timeouts and the connection limit of the HTTP listeners. */
export class HttpConfig {
  @Optional() @Integer(1) headersTimeoutMs?: number;
  @Optional() @Integer(1) requestTimeoutMs?: number;
  @Optional() @Integer(1) keepAliveTimeoutMs?: number;
  @Optional() @Integer(1) firstByteTimeoutMs?: number;
  @Optional() @Integer(1) maxConnections?: number;
}

const URL_PATH = /^\/[^?#\s]*$/;

/** `app.metrics`: true, or where to serve the Prometheus metrics. */
export class MetricsConfig {
  @Optional() @Text(URL_PATH, 'a path beginning with "/"') path?: string;
  @Optional() @Text() host?: string;
  @Optional() @Integer(0, 65535) port?: number;
  @Optional() @Flag() defaultMetrics?: boolean;
}

/** `app.health`: true, or the probes' paths. */
export class HealthConfig {
  @Optional() @Text(URL_PATH, 'a path beginning with "/"') livePath?: string;
  @Optional() @Text(URL_PATH, 'a path beginning with "/"') readyPath?: string;
}

/** `app.history`: how long accepted events are kept (on unless `false`). */
export class HistoryConfig {
  /** Milliseconds (default 7 days). */
  @Optional() @Integer(1) retainMs?: number;
  @Optional() @Integer(1) maxEvents?: number;
}

/** The top-level `app:` block: the CoreApp's own options. */
export class AppConfig {
  /** Names the data directory and appears in logs (default: the YAML file's name). */
  @Optional() @Text(APP_NAME, "1-100 letters, digits or _ . -, not dots alone") name?: string;
  /** An engine's name, or a postgres:// URL (usually `${DATABASE_URL}`). */
  @Optional() @StoreSetting(STORE_ENGINES) store?: StoreEngine | PostgresUrl;
  /** Relative to the YAML file. */
  @Optional() @Text() dataDir?: string;
  @Optional() @TrustProxySetting() trustProxy?: boolean | number | string | string[];
  @Optional() @Integer(0) shutdownTimeoutMs?: number;
  @Optional() @OneOf(LOG_LEVELS) logLevel?: LogLevel;
  @Optional() @Integer(1) maxQueued?: number;
  /** Most bytes the embedded store may occupy before sources answer 503. */
  @Optional() @Integer(1) maxBytes?: number;
  @Optional() @Section(() => HttpConfig) http?: HttpConfig;
  /** Prometheus metrics: `true`, or `{path, host, port, defaultMetrics}`. */
  @Optional() @FlagOrSection(() => MetricsConfig) metrics?: MetricsConfig;
  /** /livez and /readyz: `true`, or `{livePath, readyPath}`. */
  @Optional() @FlagOrSection(() => HealthConfig) health?: HealthConfig;
  /** The web console: `true` (127.0.0.1:9400), or `{host, port, path, auth}`. */
  @Optional() @FlagOrSection(() => ConsoleConfig) console?: ConsoleConfig;
  /** Milliseconds readiness answers 503 after SIGTERM before the drain starts. */
  @Optional() @Integer(0) shutdownDelayMs?: number;
  /** Spans through @opentelemetry/api (default true). */
  @Optional() @Flag() tracing?: boolean;
  /** One log line per refused request, rate-limited (default true). */
  @Optional() @Flag() logRefusals?: boolean;
  /** The event history: `false` (off), `true`, or `{retainMs, maxEvents}` (default on, 7 days). */
  @Optional() @SwitchOrSection(() => HistoryConfig) history?: HistoryConfig | false;
}
