import express, { type Router } from "express";
import type { TrustFunction } from "../http/trust-proxy";
import type { Logger } from "../util/logger";
import { addActionRoutes } from "./action-routes";
import type { ConsoleAssets } from "./console-assets";
import type { BulkReplays } from "./bulk-replays";
import type { ConsoleBackend } from "./console-backend";
import type { ResolvedConsoleOptions } from "./console-options";
import { ConsoleScope } from "./console-scope";
import { addPageRoutes } from "./page-routes";
import { setSecurityHeaders } from "./security-headers";
import { addSignInRoutes } from "./sign-in-routes";

/**
 * The console's routes: its assets, its pages (GET) and its actions (POST), each page and
 * action behind authentication, each action checked for a cross-site origin and the session's
 * CSRF token (ConsoleScope.guarded).
 */
export function consoleRouter(backend: ConsoleBackend, options: ResolvedConsoleOptions, assets: ConsoleAssets, logger: Logger, bulk: BulkReplays, trust?: TrustFunction, sharesWebhooks = false): Router {
  const scope = new ConsoleScope(backend, options, assets, logger, bulk, trust);
  const router = express.Router({ caseSensitive: true });
  const form = express.urlencoded({ extended: false, limit: "256kb", parameterLimit: 1000 });
  // Express mounts a path without regard to case; the console's path, like its pages, is exact.
  const base = options.path === "/" ? "" : options.path;
  router.use((req, _res, next) => next(req.baseUrl === base ? undefined : "router"));
  // The script, the stylesheet and the icon hold no data: the sign-in page needs them too.
  router.get("/assets/:name", (req, res, next) => {
    setSecurityHeaders(res, false);
    if (!assets.serve(req.params.name, req, res)) next();
  });
  addPageRoutes(router, scope);
  addActionRoutes(router, scope, form);
  addSignInRoutes(router, scope, form);
  // Its own 404 under its path, with the pages' headers (Express's has neither the policy nor
  // no-store). Not at "/" of a webhook source's listener: that 404 (JSON, counted and logged as
  // a refusal) belongs to the senders.
  if (base !== "" || !sharesWebhooks) {
    router.use((_req, res) => {
      setSecurityHeaders(res);
      res.status(404).type("text/plain").send("Not found: no such page in the console\n");
    });
  }
  return router;
}
