import type { ListenerRegistry } from "../http/listener-registry";
import type { Listener } from "../http/listener";
import type { TrustFunction } from "../http/trust-proxy";
import type { Logger } from "../util/logger";
import { BulkReplays } from "./bulk-replays";
import { ConsoleAssets } from "./console-assets";
import type { ConsoleBackend } from "./console-backend";
import type { ResolvedConsoleOptions } from "./console-options";
import { isLoopbackHost } from "../http/loopback-host";
import { consoleRouter } from "./console-router";

/** The console's routes below its path, as patterns (a segment is anything but "/"). */
const CONSOLE_ROUTES = [
  /^\/?$/,
  /^\/events$/,
  /^\/events\/[^/]+$/,
  /^\/events\/[^/]+\/replay$/,
  /^\/replay$/,
  /^\/replay-matching$/,
  /^\/dead-letters$/,
  /^\/dead-letters\/[^/]+\/(?:discard|replay)$/,
  /^\/tasks\/[^/]+\/(?:pause|resume)$/,
  /^\/login$/,
  /^\/logout$/,
  /^\/assets\/[^/]+$/,
];

/** A console the app may not serve where it is asked to (start() and check() throw it). */
export class ConsolePlacementError extends Error {
  override readonly name = "ConsolePlacementError";
}

/** A mounted console: where it answers, once the listeners listen. */
export class MountedConsole {
  constructor(
    private readonly listener: Listener,
    private readonly path: string,
    readonly assets: ConsoleAssets,
    private readonly bulk: BulkReplays,
  ) {}

  /** The app stops: no bulk replay starts now; resolves once the one running has ended and removed its note. */
  stop(): Promise<void> {
    return this.bulk.stop();
  }

  /** "http://127.0.0.1:9400/" (the bound port once listening). */
  get url(): string {
    return `${this.listener.origin}${this.path === "/" ? "/" : `${this.path}/`}`;
  }
}

/**
 * The console's listener: its own (default 127.0.0.1:9400), or a webhook source's when the
 * options name that very host and port, under a path whose routes no source takes. Throws for
 * a console reachable from other machines without `auth`, and for a place it may not take.
 * Also what `check()` runs, on the sources' listeners, without listening.
 */
export function placeConsole(listeners: ListenerRegistry, options: ResolvedConsoleOptions): Listener {
  const where = `${options.host}:${options.port}`;
  if (options.auth === undefined && !isLoopbackHost(options.host)) {
    throw new ConsolePlacementError(
      `the console on ${where} would be reachable from other machines without authentication: give console.auth ({ token } or { username, password }), or serve it on 127.0.0.1`,
    );
  }
  // Port 0 left to the default is a free port of the console's own, never the sources' free port.
  const shared = options.placed || options.port !== 0 ? listeners.find(options.host, options.port) : undefined;
  if (shared !== undefined) {
    if (!options.placed) {
      throw new ConsolePlacementError(
        `the console's address ${where} is a webhook source's listener: the console takes another port, or shares that listener under console.path only when console.host and console.port both name it`,
      );
    }
    const paths = shared.routes.paths();
    const collisions = paths.filter((path) => collides(path, options.path));
    if (collisions.length > 0) {
      const free = SUGGESTED_PATHS.find((base) => base !== options.path && !paths.some((path) => collides(path, base)));
      const hint = free === undefined ? "" : ` (e.g. "${free}")`;
      throw new ConsolePlacementError(`route conflict on ${where}: webhook path${collisions.length > 1 ? "s" : ""} ${collisions.join(", ")} would hide the console's pages under "${options.path}"; give console.path another value${hint}`);
    }
  }
  if (shared !== undefined) return shared;
  const own = options.placed ? listeners.get(options.host, options.port) : listeners.own("console", options.host, options.port);
  // A second app's console on the default 9400 is the likely clash: say whose port it is and what to change.
  own.purpose = { name: "the console", hint: "another app's console, perhaps: give console.port another port, or 0 for a free one" };
  return own;
}

/** Puts the console on its listener (see placeConsole), before the listeners start. */
export function mountConsole(listeners: ListenerRegistry, options: ResolvedConsoleOptions, backend: ConsoleBackend, logger: Logger, trust?: TrustFunction): MountedConsole {
  const listener = placeConsole(listeners, options);
  const assets = new ConsoleAssets();
  const consoleLogger = logger.child({ component: "console" });
  const bulk = new BulkReplays(backend.events, consoleLogger, backend.bulkReplays, backend.appName);
  // A webhook source's listener has routes already (placeConsole checked them against the console's path).
  const sharesWebhooks = listener.routes.paths().length > 0;
  listener.express.use(options.path, consoleRouter(backend, options, assets, consoleLogger, bulk, trust, sharesWebhooks));
  return new MountedConsole(listener, options.path, assets, bulk);
}

/** Paths the conflict error suggests, the first that no webhook path of the listener hides (and not the one refused). */
const SUGGESTED_PATHS = ["/console", "/_console", "/webhook-console", "/admin/webhook-console"];

/** Whether a webhook path is one of the console's routes under `base`. */
function collides(path: string, base: string): boolean {
  let rest: string;
  if (base === "/") rest = path;
  else if (path === base) rest = "";
  else if (path.startsWith(`${base}/`)) rest = path.slice(base.length);
  else return false;
  return CONSOLE_ROUTES.some((route) => route.test(rest));
}
