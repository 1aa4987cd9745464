import type { Router } from "express";
import type { EventStatus, HistoryEvent } from "../store/history";
import { errorMessage } from "../util/logger";
import type { ConsoleBackend } from "./console-backend";
import type { ConsoleScope } from "./console-scope";
import { FilterError, historyQuery, readFilter } from "./list-filter";
import { deadLettersPage } from "./pages/dead-letters-page";
import { eventPage } from "./pages/event-page";
import { eventsPage } from "./pages/events-page";
import { messagePage } from "./pages/message-page";
import { overviewPage } from "./pages/overview-page";
import { replayMatchingPage } from "./pages/replay-matching-page";

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** Notices a redirect may ask for by name (never text from the query string). */
const NOTICES: Record<string, string> = {
  replay: "Replay queued: this is the new event.",
  paused: "Task paused: its events are accepted and stored, none runs until you resume it.",
  resumed: "Task resumed.",
  discarded: "Dead letter discarded.",
  requeued: "Dead letter back in its queue: it runs again with fresh attempts.",
};

const noticeOf = (value: unknown): string | undefined => (typeof value === "string" && Object.hasOwn(NOTICES, value) ? NOTICES[value] : undefined);

/** The pages (GET): they read, never change anything. */
export function addPageRoutes(router: Router, scope: ConsoleScope): void {
  const { backend, bulk, sources, taskNames } = scope;
  const ctx = scope.context.bind(scope);
  const send = scope.send.bind(scope);

  router.get(
    "/",
    scope.guarded(async (req, res, principal) => {
      const now = Date.now();
      // Sixty one-minute bars, the last one the current minute.
      const hourSince = Math.floor(now / MINUTE_MS) * MINUTE_MS - 59 * MINUTE_MS;
      const [status, hour, day, paused] = await Promise.all([backend.status(), backend.activity(hourSince, MINUTE_MS), backend.activity(now - 24 * HOUR_MS, HOUR_MS), backend.paused()]);
      const data = { now, status, tasks: backend.tasks, paused, historyEnabled: backend.historyEnabled, hour, hourSince, bucketMs: MINUTE_MS, day, jobs: bulk.recent() };
      send(res, 200, overviewPage(ctx(principal), data, noticeOf(req.query.notice)));
    }),
  );

  router.get(
    "/events",
    scope.guarded(
      scope.withHistory(async (req, res, principal) => {
        const { text, error } = readFilter(req.query);
        const replayed = typeof req.query.replayed === "string" && /^\d+$/.test(req.query.replayed) ? Number(req.query.replayed) : undefined;
        const notice = replayed === undefined ? undefined : `${replayed} replay${replayed === 1 ? "" : "s"} queued.`;
        const data = { text, sources, tasks: taskNames, notice };
        const refuse = (why: string) => send(res, 400, eventsPage(ctx(principal), { ...data, page: undefined, error: why }));
        if (error !== undefined) return refuse(error);
        let query;
        try {
          query = historyQuery(text);
        } catch (e) {
          if (!(e instanceof FilterError)) throw e;
          return refuse(e.message);
        }
        const page = await backend.events.list(query).catch((e: unknown) => {
          // The engine refuses a cursor it did not make, or a search it cannot read: say so on the page.
          if (e instanceof TypeError || e instanceof RangeError) return { error: errorMessage(e) };
          throw e;
        });
        if ("error" in page) return refuse(page.error);
        send(res, 200, eventsPage(ctx(principal), { ...data, page }));
      }),
    ),
  );

  router.get(
    "/events/:id",
    scope.guarded(
      scope.withHistory(async (req, res, principal) => {
        const id = req.params.id as string;
        const event = await backend.events.get(id);
        if (event === undefined) return send(res, 404, messagePage(ctx(principal), "No such event", `No event ${id} in the history: it may have been pruned.`, "events"));
        send(res, 200, eventPage(ctx(principal), event, await linkedStatuses(backend, event), noticeOf(req.query.notice)));
      }),
    ),
  );

  router.get(
    "/replay-matching",
    scope.guarded(
      scope.withHistory(async (req, res, principal) => {
        const { text, error } = readFilter(req.query);
        const data = { text, sources, tasks: taskNames, jobs: bulk.recent() };
        if (error !== undefined) return send(res, 400, replayMatchingPage(ctx(principal), { ...data, matched: undefined, error }));
        // Just started: the page shows the replay's progress, not the form again.
        if (req.query.started === "1") return send(res, 200, replayMatchingPage(ctx(principal), { ...data, matched: undefined }));
        try {
          const { cursor: _cursor, limit: _limit, ...filter } = historyQuery(text);
          const dry = await backend.events.replay(filter, { dryRun: true });
          send(res, 200, replayMatchingPage(ctx(principal), { ...data, matched: dry.matched }));
        } catch (e) {
          if (!(e instanceof FilterError)) throw e;
          send(res, 400, replayMatchingPage(ctx(principal), { ...data, matched: undefined, error: e.message }));
        }
      }),
    ),
  );

  router.get(
    "/dead-letters",
    scope.guarded(async (req, res, principal) => {
      const letters = await backend.deadLetters.list();
      send(res, 200, deadLettersPage(ctx(principal), [...letters].sort((a, b) => b.diedAt - a.diedAt), backend.historyEnabled, noticeOf(req.query.notice)));
    }),
  );
}

/** The statuses of the events an event links to (its latest replays, what it emitted, its parent), for its page. */
async function linkedStatuses(backend: ConsoleBackend, event: HistoryEvent): Promise<Map<string, EventStatus>> {
  const ids = [...event.replays.slice(-20), ...event.children.slice(0, 20), ...(event.parentId === undefined ? [] : [event.parentId]), ...(event.replayOf === undefined ? [] : [event.replayOf])];
  const found = await Promise.all(ids.map(async (id) => [id, (await backend.events.get(id))?.status] as const));
  return new Map(found.filter((entry): entry is readonly [string, EventStatus] => entry[1] !== undefined));
}
