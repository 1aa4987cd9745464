import type { IncomingMessage } from "node:http";
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import type { DeliveryStatus, HistoryEvent } from "../store/history";
import { errorMessage, type Logger } from "../util/logger";
import { ConsoleAuthenticator, SESSION_MS, type Principal } from "./console-auth";
import type { ConsoleAssets } from "./console-assets";
import type { ConsoleBackend } from "./console-backend";
import { isLoopbackHost, type ResolvedConsoleOptions } from "./console-options";
import { ConsolePaths } from "./console-paths";
import { BulkReplays } from "./bulk-replays";
import type { PageContext } from "./layout";
import { FilterError, filterParams, filterText, historyQuery, narrows, type FilterText } from "./list-filter";
import { deadLettersPage } from "./pages/dead-letters-page";
import { eventPage } from "./pages/event-page";
import { eventsPage } from "./pages/events-page";
import { loginPage } from "./pages/login-page";
import { messagePage } from "./pages/message-page";
import { overviewPage } from "./pages/overview-page";
import { replayMatchingPage } from "./pages/replay-matching-page";
import { crossSiteReason, cameOverHttps } from "./same-origin";
import { setSecurityHeaders } from "./security-headers";

type Handler = (req: Request, res: Response, principal: Principal) => Promise<void> | void;

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** Notices a redirect may ask for by name (never text from the query string). */
const NOTICES: Record<string, string> = {
  replay: "Replay queued: this is the new event.",
  paused: "Task paused: its events are accepted and stored, none runs until you resume it.",
  resumed: "Task resumed.",
  discarded: "Dead letter discarded.",
};

/**
 * The console's routes: pages (GET) and actions (POST), each behind authentication, each
 * action checked for a cross-site origin and for the session's CSRF token.
 */
export function consoleRouter(backend: ConsoleBackend, options: ResolvedConsoleOptions, assets: ConsoleAssets, logger: Logger): Router {
  const auth = new ConsoleAuthenticator(options.auth, backend.appName);
  const paths = new ConsolePaths(options.path === "/" ? "" : options.path);
  const bulk = new BulkReplays(backend.events, logger);
  const router = express.Router({ caseSensitive: true });
  const form = express.urlencoded({ extended: false, limit: "256kb", parameterLimit: 1000 });
  const sources = [...new Set(backend.tasks.flatMap((t) => (t.source === undefined ? [] : [t.source])))];
  const taskNames = backend.tasks.map((t) => t.name);
  const cookiePath = paths.base === "" ? "/" : paths.base;

  const context = (principal: Principal | undefined): PageContext => ({
    appName: backend.appName,
    paths,
    assets,
    csrf: principal === undefined ? undefined : auth.csrfToken(principal),
    session: principal?.kind === "session",
  });

  const send = (res: Response, status: number, page: string): void => {
    res.status(status).type("html").send(page);
  };

  /** Without auth, only a loopback Host is served: a page of another site cannot rebind its name to us. */
  const hostRefusal = (req: IncomingMessage): string | undefined => {
    if (auth.mode !== "open") return undefined;
    const host = req.headers.host ?? "";
    const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
    return isLoopbackHost(name) ? undefined : `this console has no auth and answers only to a loopback host name, not "${host}"`;
  };

  const unauthorized = (req: Request, res: Response): void => {
    if (auth.mode === "basic") {
      res.setHeader("www-authenticate", 'Basic realm="webhook-tasks console", charset="UTF-8"');
      send(res, 401, messagePage(context(undefined), "Sign in", "This console needs its user name and password."));
    } else if (req.method === "GET" || req.method === "HEAD") {
      send(res, 401, loginPage(context(undefined), safeNext(req.originalUrl, paths), false));
    } else {
      send(res, 401, messagePage(context(undefined), "Sign in", "This action needs you to sign in first."));
    }
  };

  /** Runs `handler` for an authenticated request; POSTs also pass the origin and CSRF checks. */
  const guarded = (handler: Handler) => async (req: Request, res: Response, next: NextFunction) => {
    setSecurityHeaders(res);
    const refused = hostRefusal(req);
    if (refused !== undefined) return send(res, 403, messagePage(context(undefined), "Refused", refused));
    const principal = auth.authenticate(req);
    if (principal === undefined) return unauthorized(req, res);
    if (req.method === "POST") {
      const crossSite = crossSiteReason(req);
      if (crossSite !== undefined) {
        logger.warn({ path: req.originalUrl, reason: crossSite }, "console: cross-site request refused");
        return send(res, 403, messagePage(context(principal), "Refused", `This action must come from the console's own pages: ${crossSite}.`));
      }
      const body = req.body as Record<string, unknown> | undefined;
      if (!auth.csrfMatches(principal, body?._csrf)) {
        logger.warn({ path: req.originalUrl }, "console: request without a valid CSRF token refused");
        return send(res, 403, messagePage(context(principal), "Refused", "The form's security token is missing or out of date: reload the page and try again."));
      }
    }
    try {
      await handler(req, res, principal);
    } catch (error) {
      if (res.headersSent) return next(error);
      logger.error({ error: errorMessage(error), path: req.originalUrl }, "console: page failed");
      send(res, 500, messagePage(context(principal), "Something failed", `The console could not answer: ${errorMessage(error)}`));
    }
  };

  /** The history's pages without a history: say so instead of failing. */
  const withHistory = (handler: Handler): Handler => (req, res, principal) => {
    if (backend.historyEnabled) return handler(req, res, principal);
    send(res, 404, messagePage(context(principal), "No event history", "This app keeps no event history (its option history is false, or its store keeps none): there are no events to list, show or replay. The overview still shows its queues, and the dead letters their page.", "events"));
  };

  const filterOf = (query: Record<string, unknown>): { text: FilterText; error?: string } => {
    try {
      return { text: filterText(query) };
    } catch (error) {
      return { text: {}, error: errorMessage(error) };
    }
  };

  router.get("/assets/:name", (req, res, next) => {
    setSecurityHeaders(res, false);
    if (!assets.serve(req.params.name, req, res)) next();
  });

  router.get(
    "/",
    guarded(async (_req, res, principal) => {
      const now = Date.now();
      const hourSince = Math.floor(now / MINUTE_MS) * MINUTE_MS - 59 * MINUTE_MS;
      const [status, hour, day, paused] = await Promise.all([backend.status(), backend.activity(hourSince, MINUTE_MS), backend.activity(now - 24 * HOUR_MS, HOUR_MS), backend.paused()]);
      const page = overviewPage(context(principal), {
        now,
        status,
        tasks: backend.tasks,
        paused,
        historyEnabled: backend.historyEnabled,
        hour,
        hourSince,
        bucketMs: MINUTE_MS,
        day,
        jobs: bulk.recent(),
      });
      send(res, 200, page);
    }),
  );

  router.get(
    "/events",
    guarded(withHistory(async (req, res, principal) => {
      const { text, error } = filterOf(req.query);
      const replayed = typeof req.query.replayed === "string" && /^\d+$/.test(req.query.replayed) ? Number(req.query.replayed) : undefined;
      const notice = replayed === undefined ? undefined : `${replayed} replay${replayed === 1 ? "" : "s"} queued.`;
      const data = { text, sources, tasks: taskNames, notice };
      if (error !== undefined) return send(res, 400, eventsPage(context(principal), { ...data, page: undefined, error }));
      let query;
      try {
        query = historyQuery(text);
      } catch (e) {
        if (!(e instanceof FilterError)) throw e;
        return send(res, 400, eventsPage(context(principal), { ...data, page: undefined, error: e.message }));
      }
      const page = await backend.events.list(query).catch((e: unknown) => {
        // The engine refuses a cursor it did not make, or a search it cannot read: say so on the page.
        if (e instanceof TypeError || e instanceof RangeError) return { error: errorMessage(e) };
        throw e;
      });
      if ("error" in page) return send(res, 400, eventsPage(context(principal), { ...data, page: undefined, error: page.error }));
      send(res, 200, eventsPage(context(principal), { ...data, page }));
    })),
  );

  router.get(
    "/events/:id",
    guarded(withHistory(async (req, res, principal) => {
      const event = await backend.events.get(req.params.id as string);
      if (event === undefined) return send(res, 404, messagePage(context(principal), "No such event", `No event ${req.params.id as string} in the history: it may have been pruned.`, "events"));
      const notice = typeof req.query.notice === "string" ? NOTICES[req.query.notice] : undefined;
      send(res, 200, eventPage(context(principal), event, await linkedStatuses(backend, event), notice));
    })),
  );

  router.post(
    "/events/:id/replay",
    form,
    guarded(withHistory(async (req, res, principal) => {
      const id = req.params.id as string;
      const body = req.body as Record<string, unknown>;
      const task = typeof body.task === "string" && body.task !== "" ? body.task : undefined;
      const event = await backend.events.get(id);
      if (event === undefined) return send(res, 404, messagePage(context(principal), "No such event", `No event ${id} in the history: it may have been pruned.`, "events"));
      let replay;
      try {
        replay = await backend.events.replay(id, task === undefined ? {} : { task });
      } catch (error) {
        return send(res, 400, messagePage(context(principal), "Replay refused", errorMessage(error), "events"));
      }
      await discardReplayedLetters(backend, event, replay.tasks, logger);
      logger.info({ eventId: id, replay: replay.id, tasks: replay.tasks }, "console: event replayed");
      res.redirect(303, `${paths.event(replay.id)}?notice=replay`);
    })),
  );

  router.post(
    "/replay",
    form,
    guarded(withHistory(async (req, res, principal) => {
      const body = req.body as Record<string, unknown>;
      const ids = (Array.isArray(body.id) ? body.id : body.id === undefined ? [] : [body.id]).filter((v): v is string => typeof v === "string" && v !== "");
      const back = safeNext(typeof body.back === "string" ? body.back : paths.events(), paths);
      if (ids.length === 0) return send(res, 400, messagePage(context(principal), "Nothing selected", "Select the events to replay with their check boxes first.", "events"));
      const failures: string[] = [];
      for (const id of ids) {
        try {
          const event = await backend.events.get(id);
          const replay = await backend.events.replay(id);
          if (event !== undefined) await discardReplayedLetters(backend, event, replay.tasks, logger);
        } catch (error) {
          failures.push(`${id}: ${errorMessage(error)}`);
        }
      }
      logger.info({ count: ids.length - failures.length }, "console: selected events replayed");
      if (failures.length > 0) {
        return send(res, 400, messagePage(context(principal), "Some replays were refused", `${ids.length - failures.length} queued; refused: ${failures.join("; ")}`, "events"));
      }
      res.redirect(303, `${back}${back.includes("?") ? "&" : "?"}replayed=${ids.length}`);
    })),
  );

  router.get(
    "/replay-matching",
    guarded(withHistory(async (req, res, principal) => {
      const { text, error } = filterOf(req.query);
      const data = { text, sources, tasks: taskNames, jobs: bulk.recent() };
      if (error !== undefined) return send(res, 400, replayMatchingPage(context(principal), { ...data, matched: undefined, error }));
      if (req.query.started === "1") return send(res, 200, replayMatchingPage(context(principal), { ...data, matched: undefined }));
      try {
        const { cursor: _cursor, limit: _limit, ...filter } = historyQuery(text);
        const dry = await backend.events.replay(filter, { dryRun: true });
        send(res, 200, replayMatchingPage(context(principal), { ...data, matched: dry.matched }));
      } catch (e) {
        if (!(e instanceof FilterError)) throw e;
        send(res, 400, replayMatchingPage(context(principal), { ...data, matched: undefined, error: e.message }));
      }
    })),
  );

  router.post(
    "/replay-matching",
    form,
    guarded(withHistory(async (req, res, principal) => {
      const body = req.body as Record<string, unknown>;
      const { text, error } = filterOf(body);
      const refuse = (why: string) => send(res, 400, replayMatchingPage(context(principal), { text, sources, tasks: taskNames, jobs: bulk.recent(), matched: undefined, error: why }));
      if (error !== undefined) return refuse(error);
      if (!narrows(text) && body.everything !== "yes") return refuse("This filter matches every event: tick “Yes, replay every event” to confirm.");
      const rate = body.ratePerSecond === undefined || body.ratePerSecond === "" ? undefined : Number(body.ratePerSecond);
      if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1 && rate <= 10_000)) return refuse("At most per second must be a whole number from 1 to 10,000.");
      const task = typeof body.replayTask === "string" && body.replayTask !== "" ? body.replayTask : undefined;
      let filter;
      try {
        const { cursor: _cursor, limit: _limit, ...rest } = historyQuery(text);
        filter = rest;
      } catch (e) {
        if (!(e instanceof FilterError)) throw e;
        return refuse(e.message);
      }
      const params = filterParams(text, ["cursor", "limit"]);
      bulk.start(filter, params.toString(), { task, ratePerSecond: rate });
      params.set("started", "1");
      res.redirect(303, paths.replayMatching(params));
    })),
  );

  router.get(
    "/dead-letters",
    guarded(async (req, res, principal) => {
      const letters = await backend.deadLetters.list();
      const notice = typeof req.query.notice === "string" ? NOTICES[req.query.notice] : undefined;
      send(res, 200, deadLettersPage(context(principal), [...letters].sort((a, b) => b.diedAt - a.diedAt), notice));
    }),
  );

  router.post(
    "/dead-letters/:id/discard",
    form,
    guarded(async (req, res) => {
      await backend.deadLetters.purge({ id: req.params.id as string });
      res.redirect(303, `${paths.deadLetters()}?notice=discarded`);
    }),
  );

  for (const action of ["pause", "resume"] as const) {
    router.post(
      `/tasks/:task/${action}`,
      form,
      guarded(async (req, res, principal) => {
        const task = req.params.task as string;
        if (!taskNames.includes(task)) return send(res, 404, messagePage(context(principal), "No such task", `This app has no task "${task}".`));
        await (action === "pause" ? backend.pause(task) : backend.resume(task));
        logger.info({ task }, `console: task ${action === "pause" ? "paused" : "resumed"}`);
        res.redirect(303, `${paths.overview()}?notice=${action === "pause" ? "paused" : "resumed"}`);
      }),
    );
  }

  router.get("/login", (req, res) => {
    setSecurityHeaders(res);
    if (auth.mode !== "token") return res.redirect(303, paths.overview());
    const next = safeNext(typeof req.query.next === "string" ? req.query.next : paths.overview(), paths);
    if (auth.authenticate(req) !== undefined) return res.redirect(303, next);
    send(res, 200, loginPage(context(undefined), next, false));
  });

  router.post("/login", form, (req, res) => {
    setSecurityHeaders(res);
    if (auth.mode !== "token") return res.redirect(303, paths.overview());
    // No session yet to bind a CSRF token to: the origin check alone keeps other sites from signing a browser in.
    const crossSite = crossSiteReason(req);
    if (crossSite !== undefined) return send(res, 403, messagePage(context(undefined), "Refused", `Sign in from the console's own page: ${crossSite}.`, "login"));
    const body = req.body as Record<string, unknown> | undefined;
    const next = safeNext(typeof body?.next === "string" ? body.next : paths.overview(), paths);
    if (typeof body?.token !== "string" || !auth.tokenMatches(body.token)) {
      logger.warn({ client: req.socket.remoteAddress }, "console: sign-in with a wrong token");
      return send(res, 401, loginPage(context(undefined), next, true));
    }
    const secure = cameOverHttps(req) ? "; Secure" : "";
    res.setHeader("set-cookie", `${auth.cookieName}=${auth.newSession()}; Path=${cookiePath}; Max-Age=${SESSION_MS / 1000}; HttpOnly; SameSite=Strict${secure}`);
    res.redirect(303, next);
  });

  router.post(
    "/logout",
    form,
    guarded((req, res) => {
      res.setHeader("set-cookie", `${auth.cookieName}=; Path=${cookiePath}; Max-Age=0; HttpOnly; SameSite=Strict${cameOverHttps(req) ? "; Secure" : ""}`);
      res.redirect(303, paths.login());
    }),
  );

  return router;
}

/**
 * Where to go after signing in or a bulk action: a path of this console only, never another
 * site ("//evil.example", "/\\evil.example") nor a path outside the console.
 */
export function safeNext(value: string, paths: ConsolePaths): string {
  const fallback = paths.overview();
  if (!value.startsWith("/") || value.startsWith("//") || value.includes("\\") || /[\r\n]/.test(value)) return fallback;
  if (paths.base !== "" && value !== paths.base && !value.startsWith(`${paths.base}/`) && !value.startsWith(`${paths.base}?`)) return fallback;
  return value;
}

/** The statuses of the events an event links to (its latest replays, what it emitted, its parent), for its page. */
async function linkedStatuses(backend: ConsoleBackend, event: HistoryEvent): Promise<Map<string, DeliveryStatus>> {
  const ids = [...event.replays.slice(-20), ...event.children.slice(0, 20), ...(event.parentId === undefined ? [] : [event.parentId]), ...(event.replayOf === undefined ? [] : [event.replayOf])];
  const found = await Promise.all(ids.map(async (id) => [id, (await backend.events.get(id))?.status] as const));
  return new Map(found.filter((entry): entry is readonly [string, DeliveryStatus] => entry[1] !== undefined));
}

/** A replayed delivery's dead letter has nothing left to say: the replay supersedes it. */
async function discardReplayedLetters(backend: ConsoleBackend, event: HistoryEvent, tasks: readonly string[], logger: Logger): Promise<void> {
  for (const delivery of event.deliveries) {
    if (delivery.status !== "dead" || !tasks.includes(delivery.task)) continue;
    try {
      await backend.deadLetters.purge({ id: delivery.messageId });
    } catch (error) {
      logger.warn({ eventId: event.id, task: delivery.task, error: errorMessage(error) }, "console: the replayed dead letter could not be discarded");
    }
  }
}
