import type { NextFunction, Request, Response } from "express";
import { Registry } from "prom-client";
import type { Logger } from "../util/logger";
import { AppEvents } from "../app/app-events";
import type { ListenerRegistry } from "../http/listener-registry";
import type { Listener } from "../http/listener";
import type { Inbox } from "../sources/source";
import type { Store } from "../store/store";
import { combineObservers, type AppObserver } from "./app-observer";
import { DEFAULT_LIVE_PATH, DEFAULT_READY_PATH, liveHandler, readyHandler, type HealthOptions, type Readiness } from "./health";
import { MetricsObserver, type QueueStatsSource } from "./metrics";
import { debugEnabled, DeliveryLog } from "./delivery-log";
import { listenerRefusalHook } from "./observed-route";
import { RefusalLogObserver } from "./refusal-log";
import { TimedStore } from "./timed-store";

/** `metrics: true` or how to serve them. */
export interface MetricsOptions {
  /** Path of the Prometheus exposition (default "/metrics"). */
  readonly path?: string;
  /**
   * Serve the metrics on this host:port only (its own listener, or the sources' if they share
   * it). Default: on every listener of the app.
   */
  readonly host?: string;
  readonly port?: number;
  /** Your prom-client Registry (default: a new one); `app.metrics` is this registry. */
  readonly registry?: Registry;
  /** prom-client's default process metrics (default true). */
  readonly defaultMetrics?: boolean;
}

export const DEFAULT_METRICS_PATH = "/metrics";

/** The observability options of CoreAppOptions. */
export interface ObservabilityOptions {
  readonly metrics?: boolean | MetricsOptions;
  readonly health?: boolean | HealthOptions;
  /** Spans through @opentelemetry/api (default true; a no-op until an SDK is registered). */
  readonly tracing?: boolean;
  /** One line per refused request, rate-limited (default true). */
  readonly logRefusals?: boolean;
}

/**
 * Everything an app does for operators, built from its options: the observer the receiver,
 * listeners and runners report to (metrics, refusal logs, events), the store wrapper that
 * times writes, and the /metrics, /livez, /readyz routes.
 */
export class AppObservability {
  readonly registry: Registry | undefined;
  readonly events: AppEvents;
  readonly tracing: boolean;
  private readonly metricsOptions: MetricsOptions | undefined;
  private readonly healthOptions: HealthOptions | undefined;
  private readonly metricsObserver: MetricsObserver | undefined;
  private readonly refusals: RefusalLogObserver | undefined;
  /** The debug lines that follow each delivery; only when the logger writes debug lines. */
  private readonly deliveries: DeliveryLog | undefined;
  private combined: AppObserver | undefined;

  constructor(options: ObservabilityOptions, logger: Logger, queues: QueueStatsSource) {
    this.metricsOptions = options.metrics === true ? {} : options.metrics === false || options.metrics === undefined ? undefined : checkMetrics(options.metrics);
    this.healthOptions = options.health === true ? {} : options.health === false || options.health === undefined ? undefined : checkHealth(options.health);
    this.tracing = options.tracing !== false;
    this.events = new AppEvents(logger);
    if (this.metricsOptions !== undefined) {
      this.registry = this.metricsOptions.registry ?? new Registry();
      this.metricsObserver = new MetricsObserver(this.registry, queues, { defaultMetrics: this.metricsOptions.defaultMetrics });
    }
    if (options.logRefusals !== false) this.refusals = new RefusalLogObserver(logger);
    // Asked once: a logger above debug gets no wrapper and no hook at all.
    if (debugEnabled(logger)) this.deliveries = new DeliveryLog(logger);
  }

  get healthEnabled(): boolean {
    return this.healthOptions !== undefined;
  }

  /** The observer of requests and runs; undefined when nothing observes requests (no metrics, no refusal logs). */
  get observer(): AppObserver | undefined {
    const all: Array<AppObserver | undefined> = [this.metricsObserver, this.refusals, this.events, this.deliveries];
    return (this.combined ??= combineObservers(all.filter((o): o is AppObserver => o !== undefined)));
  }

  /** Whether request handlers need wrapping at all (the cheapest path when nothing watches). */
  get watchesRequests(): boolean {
    return this.metricsObserver !== undefined || this.refusals !== undefined || this.tracing;
  }

  /** The store the app uses: timed when metrics are on, followed by the delivery log at debug. */
  wrapStore(store: Store): Store {
    const metrics = this.metricsObserver;
    const timed = metrics === undefined ? store : new TimedStore(store, (write) => metrics.onStoreWrite(write));
    return this.deliveries === undefined ? timed : this.deliveries.wrapStore(timed);
  }

  /** A source's inbox: at debug, each stored event gets its "event received" line. */
  wrapInbox(inbox: Inbox): Inbox {
    return this.deliveries === undefined ? inbox : this.deliveries.wrapInbox(inbox);
  }

  /** Hooks 404/405 of every listener, and mounts the metrics and health routes. Before the listeners start. */
  mount(listeners: ListenerRegistry, readiness: () => Readiness): void {
    const observer = this.observer;
    if (observer !== undefined && (this.metricsObserver !== undefined || this.refusals !== undefined)) {
      for (const listener of listeners.all()) listener.onRefusal = listenerRefusalHook(observer, () => listener.origin);
    }
    const metrics = this.metricsOptions;
    const registry = this.registry;
    if (metrics !== undefined && registry !== undefined) {
      const targets = metrics.host !== undefined || metrics.port !== undefined ? [listeners.get(metrics.host ?? "127.0.0.1", metrics.port ?? 9464)] : listeners.all();
      const path = metrics.path ?? DEFAULT_METRICS_PATH;
      for (const listener of targets) {
        refuseWebhookPath(listener, path, "the metrics");
        listener.express.get(path, exactly(path, metricsHandler(registry)));
      }
      // A listener of its own is new: it gets the refusal hook too.
      if (observer !== undefined) for (const listener of targets) listener.onRefusal ??= listenerRefusalHook(observer, () => listener.origin);
    }
    const health = this.healthOptions;
    if (health !== undefined) {
      for (const listener of listeners.all()) mountHealth(listener, health, readiness);
    }
  }
}

/** Webhook routes are served before Express: a source on a probe's path would answer the probe 405. */
function refuseWebhookPath(listener: Listener, path: string, what: string): void {
  if (listener.routes.match(path) === undefined) return;
  throw new Error(`route conflict: GET ${path} on ${listener.host}:${listener.requestedPort} is both a webhook source's path and ${what} path; move one of them`);
}

function mountHealth(listener: Listener, health: HealthOptions, readiness: () => Readiness): void {
  refuseWebhookPath(listener, health.livePath ?? DEFAULT_LIVE_PATH, "the liveness");
  refuseWebhookPath(listener, health.readyPath ?? DEFAULT_READY_PATH, "the readiness");
  const livePath = health.livePath ?? DEFAULT_LIVE_PATH;
  const readyPath = health.readyPath ?? DEFAULT_READY_PATH;
  listener.express.get(livePath, exactly(livePath, liveHandler));
  listener.express.get(readyPath, exactly(readyPath, readyHandler(readiness)));
}

/**
 * Express matches routes without regard to case and with an optional trailing slash; these
 * paths answer only as written, as webhook paths do (`/METRICS` and `/metrics/` are 404).
 */
function exactly(path: string, handler: (req: Request, res: Response) => void): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => (req.path === path ? handler(req, res) : next());
}

function metricsHandler(registry: Registry): (req: Request, res: Response) => void {
  return (_req, res) => {
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store", "content-length": Buffer.byteLength(text) });
        res.end(text);
      },
      () => {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("metrics could not be collected\n");
      },
    );
  };
}

function checkPath(value: unknown, where: string): void {
  if (value !== undefined && (typeof value !== "string" || !value.startsWith("/") || /[?#\s]/.test(value))) {
    throw new TypeError(`${where} must be a path beginning with "/", without query, fragment or spaces`);
  }
}

function checkMetrics(options: MetricsOptions): MetricsOptions {
  if (typeof options !== "object" || options === null) throw new TypeError("metrics must be true, false or { path, host, port, registry }");
  checkPath(options.path, "metrics.path");
  if (options.port !== undefined && (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535)) throw new TypeError("metrics.port must be an integer from 0 to 65535");
  if (options.host !== undefined && (typeof options.host !== "string" || options.host === "")) throw new TypeError("metrics.host must be a non-empty string");
  if (options.registry !== undefined && !(options.registry instanceof Registry)) throw new TypeError("metrics.registry must be a prom-client Registry");
  return options;
}

function checkHealth(options: HealthOptions): HealthOptions {
  if (typeof options !== "object" || options === null) throw new TypeError("health must be true, false or { livePath, readyPath }");
  checkPath(options.livePath, "health.livePath");
  checkPath(options.readyPath, "health.readyPath");
  return options;
}
