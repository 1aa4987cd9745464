import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { clientAddress } from "../http/forwarded";
import type { TrustFunction } from "../http/trust-proxy";
import { errorMessage, type Logger } from "../util/logger";
import type { BulkReplays } from "./bulk-replays";
import { ConsoleAuthenticator, type Principal } from "./console-auth";
import { ConsoleSignOuts } from "./console-sign-outs";
import type { ConsoleAssets } from "./console-assets";
import type { ConsoleBackend } from "./console-backend";
import type { ResolvedConsoleOptions } from "./console-options";
import { isLoopbackHost } from "../http/loopback-host";
import { ConsolePaths } from "./console-paths";
import type { PageContext } from "./layout";
import { loginPage } from "./pages/login-page";
import { messagePage } from "./pages/message-page";
import { crossSiteReason } from "./same-origin";
import { safeNext } from "./safe-next";
import { setSecurityHeaders } from "./security-headers";
import { SignInThrottle } from "./sign-in-throttle";
import { StoreRefusedError } from "../store/store-errors";
import { LineRateLimiter } from "../observe/rate-limit";

/** Sign-in refusal lines per kind and second; past it one line a second counts the rest. */
export const SIGN_IN_REFUSAL_LINES_PER_SECOND = 10;

/** A route's work, once the request is known to be allowed. */
export type GuardedHandler = (req: Request, res: Response, principal: Principal) => Promise<void> | void;

/**
 * What every route of one console works with: the app's methods, authentication, its URLs,
 * and the guard every page and action passes.
 */
export class ConsoleScope {
  readonly auth: ConsoleAuthenticator;
  readonly paths: ConsolePaths;
  /** Labels of the webhook sources, for the filter form. */
  readonly sources: readonly string[];
  readonly taskNames: readonly string[];
  readonly throttle = new SignInThrottle();
  /**
   * The throttle answers 429 per address: guesses from many addresses (an IPv6 prefix, a
   * botnet) would each still write a line, as many as the requests. Keyed by kind (three).
   */
  private readonly refusalLines: LineRateLimiter;

  constructor(
    readonly backend: ConsoleBackend,
    options: ResolvedConsoleOptions,
    readonly assets: ConsoleAssets,
    readonly logger: Logger,
    /** Its bulk replays (the app's stop ends the one running). */
    readonly bulk: BulkReplays,
    /** The app's trustProxy: behind a trusted proxy, wrong tokens are counted per client, not per proxy. */
    private readonly trust?: TrustFunction,
  ) {
    this.auth = new ConsoleAuthenticator(options.auth, backend.appName, new ConsoleSignOuts(backend.signOuts));
    this.paths = new ConsolePaths(options.path === "/" ? "" : options.path);
    this.sources = [...new Set(backend.tasks.flatMap((t) => (t.source === undefined ? [] : [t.source])))];
    this.taskNames = backend.tasks.map((t) => t.name);
    this.refusalLines = new LineRateLimiter(SIGN_IN_REFUSAL_LINES_PER_SECOND, 1_000, (what, suppressed) =>
      this.logger.warn({ suppressed }, `console: ${suppressed} more sign-ins refused (${what}), not logged one by one`),
    );
  }

  context(principal: Principal | undefined): PageContext {
    return {
      appName: this.backend.appName,
      paths: this.paths,
      assets: this.assets,
      csrf: principal === undefined ? undefined : this.auth.csrfToken(principal),
      session: principal?.kind === "session",
    };
  }

  send(res: Response, status: number, page: string): void {
    res.status(status).type("html").send(page);
  }

  /**
   * Runs `handler` for an authenticated request (401 otherwise); a POST must also come from the
   * console's own pages and carry the session's CSRF token (403 otherwise). A failure is a 500 page.
   */
  guarded(handler: GuardedHandler): RequestHandler {
    return async (req: Request, res: Response, next: NextFunction) => {
      setSecurityHeaders(res);
      const refused = this.hostRefusal(req);
      if (refused !== undefined) return this.send(res, 403, messagePage(this.context(undefined), "Refused", refused));
      const client = this.clientOf(req);
      let principal: Principal | undefined;
      try {
        principal = await this.auth.signedIn(req);
      } catch (error) {
        // Whether the session signed out cannot be told (the store failing): not let in.
        this.logger.error({ error: errorMessage(error), path: pathOf(req) }, "console: could not check the session");
        return this.send(res, 503, messagePage(this.context(undefined), "Unavailable", `The console cannot check your session now: ${errorMessage(error)}`));
      }
      // A signed session cookie is no guess: others' wrong tokens from its address do not lock it out.
      // Anything else is refused before its answer is told, the right token included.
      if (principal?.kind !== "session" && principal?.kind !== "open" && this.throttled(client, res)) return;
      if (principal === undefined) {
        if (this.auth.triesCredentials(req)) this.wrongCredentials(client, "a wrong Authorization header");
        return this.unauthorized(req, res);
      }
      if (req.method === "POST") {
        const crossSite = crossSiteReason(req);
        if (crossSite !== undefined) {
          this.logger.warn({ path: pathOf(req), reason: crossSite }, "console: cross-site request refused");
          return this.send(res, 403, messagePage(this.context(principal), "Refused", `This action must come from the console's own pages: ${crossSite}.`));
        }
        const body = req.body as Record<string, unknown> | undefined;
        if (!this.auth.csrfMatches(principal, body?._csrf)) {
          this.logger.warn({ path: pathOf(req) }, "console: request without a valid CSRF token refused");
          return this.send(res, 403, messagePage(this.context(principal), "Refused", "The form's security token is missing or out of date: reload the page and try again."));
        }
      }
      try {
        await handler(req, res, principal);
      } catch (error) {
        if (res.headersSent) return next(error);
        this.logger.error({ error: errorMessage(error), path: pathOf(req) }, "console: page failed");
        // A store that cannot be reached now (a database down) is the server's passing state: 503, as the webhooks get.
        if (error instanceof StoreRefusedError) return this.send(res, 503, messagePage(this.context(principal), "Unavailable", `The console cannot read the store now: ${errorMessage(error)}`));
        this.send(res, 500, messagePage(this.context(principal), "Something failed", `The console could not answer: ${errorMessage(error)}`));
      }
    };
  }

  /** The history's pages and actions, in an app without a history: say so instead of failing. */
  withHistory(handler: GuardedHandler): GuardedHandler {
    return (req, res, principal) => {
      if (this.backend.historyEnabled) return handler(req, res, principal);
      const why =
        "This app keeps no event history (its option history is false, or its store keeps none): there are no events to list, show or replay. The overview still shows its queues, and the dead letters their page.";
      this.send(res, 404, messagePage(this.context(principal), "No event history", why, "events"));
    };
  }

  /** The client a request comes from: the socket's peer, or whom a trusted proxy names (trustProxy). */
  clientOf(req: IncomingMessage): string {
    return clientAddress(req, this.trust)[0];
  }

  /** Answers 429 when `client` gave wrong credentials too often lately; true when it did. */
  throttled(client: string, res: Response): boolean {
    const wait = this.throttle.retryAfter(client);
    if (wait === undefined) return false;
    res.setHeader("retry-after", String(wait));
    this.send(res, 429, messagePage(this.context(undefined), "Too many attempts", `Too many wrong tokens or passwords from your address: try again in ${wait} s.`, "login"));
    return true;
  }

  /** Counts (and logs, rate-limited) a wrong token or password from `client`. */
  wrongCredentials(client: string, what: string): void {
    this.throttle.failed(client);
    if (this.refusalLines.allow(what)) this.logger.warn({ client }, `console: sign-in refused (${what})`);
  }

  /** Without auth, only a loopback Host is served: a page of another site cannot rebind its name to us. */
  private hostRefusal(req: IncomingMessage): string | undefined {
    if (this.auth.mode !== "open") return undefined;
    const host = req.headers.host ?? "";
    const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
    return isLoopbackHost(name) ? undefined : `this console has no auth and answers only to a loopback host name, not "${host}"`;
  }

  private unauthorized(req: Request, res: Response): void {
    const ctx = this.context(undefined);
    if (this.auth.mode === "basic") {
      res.setHeader("www-authenticate", 'Basic realm="webhook-tasks console", charset="UTF-8"');
      this.send(res, 401, messagePage(ctx, "Sign in", "This console needs its user name and password."));
    } else if (req.method === "GET" || req.method === "HEAD") {
      this.send(res, 401, loginPage(ctx, safeNext(req.originalUrl, this.paths), false));
    } else {
      // A form sent after the session ended (expired, signed out elsewhere): sign in again, back to the page it came from.
      const note = "Your session has ended, so that action was not done: sign in again, then repeat it.";
      this.send(res, 401, loginPage(ctx, safeNext(this.refererPath(req), this.paths), false, note));
    }
  }

  /** The path of the page a form was sent from, when it is a page of this host ("" otherwise). */
  private refererPath(req: IncomingMessage): string {
    try {
      const from = new URL(req.headers.referer ?? "");
      return from.host === req.headers.host ? `${from.pathname}${from.search}` : "";
    } catch {
      return "";
    }
  }
}

/** The request's path for a log line, without its query: filters typed into the console (a search for a customer's address) stay out of the logs. */
function pathOf(req: Request): string {
  const url = req.originalUrl;
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}
