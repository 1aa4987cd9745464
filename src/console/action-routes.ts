import type { RequestHandler, Router } from "express";
import type { HistoryEvent } from "../store/history";
import { ReplayError } from "../app/event-replay";
import { errorMessage } from "../util/logger";
import type { ConsoleScope } from "./console-scope";
import { FilterError, filterParams, historyQuery, narrows, readFilter } from "./list-filter";
import { eventIdOf } from "./pages/dead-letters-page";
import { messagePage } from "./pages/message-page";
import { replayMatchingPage } from "./pages/replay-matching-page";
import { safeNext } from "./safe-next";

/** The actions (POST): replays, discarding a dead letter, pausing and resuming; each answers with a redirect (303). */
export function addActionRoutes(router: Router, scope: ConsoleScope, form: RequestHandler): void {
  const { backend, bulk, paths, logger, sources, taskNames } = scope;
  const ctx = scope.context.bind(scope);
  const send = scope.send.bind(scope);

  /** A replayed delivery's dead letter has nothing left to say: the replay supersedes it. */
  const discardReplayedLetters = async (event: HistoryEvent, { tasks }: { readonly tasks: readonly string[] }): Promise<void> => {
    for (const delivery of event.deliveries) {
      if (delivery.status !== "dead" || !tasks.includes(delivery.task)) continue;
      try {
        await backend.deadLetters.purge({ id: delivery.messageId });
      } catch (error) {
        logger.warn({ eventId: event.id, task: delivery.task, error: errorMessage(error) }, "console: the replayed dead letter could not be discarded");
      }
    }
  };

  router.post(
    "/events/:id/replay",
    form,
    scope.guarded(
      scope.withHistory(async (req, res, principal) => {
        const id = req.params.id as string;
        const body = req.body as Record<string, unknown>;
        const task = typeof body.task === "string" && body.task !== "" ? body.task : undefined;
        const event = await backend.events.get(id);
        if (event === undefined) return send(res, 404, messagePage(ctx(principal), "No such event", `No event ${id} in the history: it may have been pruned.`, "events"));
        let replay;
        try {
          replay = await backend.events.replay(id, task === undefined ? {} : { task });
        } catch (error) {
          return send(res, 400, messagePage(ctx(principal), "Replay refused", errorMessage(error), "events"));
        }
        await discardReplayedLetters(event, replay);
        logger.info({ eventId: id, replay: replay.id, tasks: replay.tasks }, "console: event replayed");
        res.redirect(303, `${paths.event(replay.id)}?notice=replay`);
      }),
    ),
  );

  router.post(
    "/replay",
    form,
    scope.guarded(
      scope.withHistory(async (req, res, principal) => {
        const body = req.body as Record<string, unknown>;
        const ids = (Array.isArray(body.id) ? body.id : body.id === undefined ? [] : [body.id]).filter((v): v is string => typeof v === "string" && v !== "");
        const back = safeNext(typeof body.back === "string" ? body.back : paths.events(), paths);
        if (ids.length === 0) return send(res, 400, messagePage(ctx(principal), "Nothing selected", "Select the events to replay with their check boxes first.", "events"));
        const failures: string[] = [];
        for (const id of ids) {
          try {
            const event = await backend.events.get(id);
            const replay = await backend.events.replay(id);
            if (event !== undefined) await discardReplayedLetters(event, replay);
          } catch (error) {
            failures.push(`${id}: ${errorMessage(error)}`);
          }
        }
        logger.info({ count: ids.length - failures.length }, "console: selected events replayed");
        if (failures.length > 0) {
          return send(res, 400, messagePage(ctx(principal), "Some replays were refused", `${ids.length - failures.length} queued; refused: ${failures.join("; ")}`, "events"));
        }
        res.redirect(303, `${back}${back.includes("?") ? "&" : "?"}replayed=${ids.length}`);
      }),
    ),
  );

  router.post(
    "/replay-matching",
    form,
    scope.guarded(
      scope.withHistory(async (req, res, principal) => {
        const body = req.body as Record<string, unknown>;
        const { text, error } = readFilter(body);
        const refuse = (why: string, status = 400) => send(res, status, replayMatchingPage(ctx(principal), { text, sources, tasks: taskNames, jobs: bulk.recent(), matched: undefined, error: why }));
        if (error !== undefined) return refuse(error);
        if (!narrows(text) && body.everything !== "yes") return refuse("This filter matches every event: tick “Yes, replay every event” to confirm.");
        const rate = body.ratePerSecond === undefined || body.ratePerSecond === "" ? undefined : Number(body.ratePerSecond);
        if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1 && rate <= 10_000)) return refuse("At most per second must be a whole number from 1 to 10,000.");
        const task = typeof body.replayTask === "string" && body.replayTask !== "" ? body.replayTask : undefined;
        // Refused now, not by the replay running in the background, whose failure shows only on a later page.
        if (task !== undefined && !taskNames.includes(task)) return refuse(`This app has no task "${task}" (its tasks: ${taskNames.join(", ")}).`);
        let filter;
        try {
          const { cursor: _cursor, limit: _limit, ...rest } = historyQuery(text);
          filter = rest;
        } catch (e) {
          if (!(e instanceof FilterError)) throw e;
          return refuse(e.message);
        }
        const params = filterParams(text, ["cursor", "limit"]);
        // A second click, a resent form or another tab (on this replica or another) would replay every event again, and pace apart.
        let job;
        try {
          job = await bulk.start(filter, params.toString(), { task, ratePerSecond: rate, onReplayed: discardReplayedLetters });
        } catch (e) {
          // The app is stopping: none starts now, and none would run long.
          if (!(e instanceof ReplayError)) throw e;
          return refuse(e.message, 503);
        }
        if (job === undefined) return refuse("A bulk replay is still running (below, or on another replica's console): wait for it to finish before starting another.", 409);
        params.set("started", "1");
        res.redirect(303, paths.replayMatching(params));
      }),
    ),
  );

  router.post(
    "/dead-letters/:id/discard",
    form,
    scope.guarded(async (req, res) => {
      const id = req.params.id as string;
      await backend.deadLetters.purge({ id });
      logger.info({ letter: id }, "console: dead letter discarded");
      res.redirect(303, `${paths.deadLetters()}?notice=discarded`);
    }),
  );

  router.post(
    "/dead-letters/:id/replay",
    form,
    scope.guarded(async (req, res, principal) => {
      const id = req.params.id as string;
      const letter = await backend.deadLetters.get(id);
      if (letter === undefined) return send(res, 404, messagePage(ctx(principal), "No such dead letter", `No dead letter ${id}: it may have been replayed or discarded already.`, "dead-letters"));
      // Its event in the history: a replay linked to it. Pruned (the history keeps days, letters stay) or no history: the letter itself goes back.
      const event = backend.historyEnabled ? await backend.events.get(eventIdOf(letter)) : undefined;
      if (event !== undefined) {
        let replay;
        try {
          replay = await backend.events.replay(event.id, { task: letter.task });
        } catch (error) {
          return send(res, 400, messagePage(ctx(principal), "Replay refused", errorMessage(error), "dead-letters"));
        }
        await discardReplayedLetters(event, replay);
        logger.info({ eventId: event.id, replay: replay.id, tasks: replay.tasks }, "console: event replayed");
        return res.redirect(303, `${paths.event(replay.id)}?notice=replay`);
      }
      // Back in a queue none of the app's tasks reads (a task renamed or removed), it would wait there unseen: it stays a dead letter, in sight.
      if (!backend.tasks.some((t) => t.queue === letter.queue)) {
        return send(res, 409, messagePage(ctx(principal), "Replay refused", `No task of this app reads queue "${letter.queue}" (its task "${letter.task}" was renamed or removed?): replayed, the letter would wait there unseen. Give a task the name "${letter.task}" again, or discard the letter.`, "dead-letters"));
      }
      if (!(await backend.deadLetters.replay(id))) return send(res, 404, messagePage(ctx(principal), "No such dead letter", `No dead letter ${id}: it may have been replayed or discarded already.`, "dead-letters"));
      logger.info({ letter: id }, "console: dead letter back in its queue");
      res.redirect(303, `${paths.deadLetters()}?notice=requeued`);
    }),
  );

  for (const action of ["pause", "resume"] as const) {
    router.post(
      `/tasks/:task/${action}`,
      form,
      scope.guarded(async (req, res, principal) => {
        const task = req.params.task as string;
        if (!taskNames.includes(task)) return send(res, 404, messagePage(ctx(principal), "No such task", `This app has no task "${task}".`));
        await (action === "pause" ? backend.pause(task) : backend.resume(task));
        logger.info({ task }, `console: task ${action === "pause" ? "paused" : "resumed"}`);
        res.redirect(303, `${paths.overview()}?notice=${action === "pause" ? "paused" : "resumed"}`);
      }),
    );
  }
}
