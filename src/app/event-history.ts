import type { EventOrigin, EventStatus, HistoryEvent, HistoryPage, HistoryQuery, HistoryStore } from "../store/history";
import { checkHistoryQuery } from "../store/history-query";
import type { Store } from "../store/store";
import { didYouMean } from "../util/did-you-mean";
import type { Logger } from "../util/logger";
import type { BulkReplayOptions, BulkReplayResult, EventsApi, ReplayFilter, ReplayOptions, ReplayResult } from "./events-api";
import { DEFAULT_REPLAY_RATE, queueReplay, replayEach, ReplayError, ReplayStoppedError, withHeldDeadLetters, type ReplayCopyTarget } from "./event-replay";
import { ReplayRuns } from "./replay-runs";
import type { OrderingKeyFn } from "./ordering-key";
import { FilterError, runFilter, type Accepts } from "./task-filter";

export { DEFAULT_REPLAY_RATE, ReplayError, ReplayStoppedError };

/** What a replay needs to know of a task. */
export interface ReplayTarget extends ReplayCopyTarget {
  /** The webhook source's label, for a task on a push source. */
  readonly source: string | undefined;
  /** The named queue it consumes. */
  readonly input: string | undefined;
  readonly orderingKey: OrderingKeyFn<never> | undefined;
  /** Whether it takes an event (its `on` and `filter`): how an unrouted event is routed when replayed. */
  readonly accepts: Accepts | undefined;
}

/** What `app.events` needs of the running app. */
export interface EventHistoryHost {
  /** The history; throws, saying why, when the app keeps none or is not running. */
  history(): HistoryStore;
  store(): Store;
  target(task: string): ReplayTarget | undefined;
  taskNames(): readonly string[];
  readonly logger: Logger;
}


/** `app.events`: list and get pass through to the store's history; replays are new deliveries linked to their original. */
export class EventHistory implements EventsApi {
  private readonly runs = new ReplayRuns();

  constructor(private readonly host: EventHistoryHost) {}

  async list(query: HistoryQuery = {}): Promise<HistoryPage> {
    return this.host.history().list(query);
  }

  async get(id: string): Promise<HistoryEvent | undefined> {
    if (typeof id !== "string" || id === "") throw new TypeError(`app.events.get: an event id is a non-empty string, got ${typeof id}`);
    return noted(this.host.history(), id);
  }

  replay(id: string, options?: ReplayOptions): Promise<ReplayResult>;
  replay(filter: ReplayFilter, options?: BulkReplayOptions): Promise<BulkReplayResult>;
  replay(what: string | ReplayFilter, options: BulkReplayOptions = {}): Promise<ReplayResult | BulkReplayResult> {
    if (typeof what === "string") return this.runs.run(() => this.replayOne(what, options));
    return this.runs.run((signal) => this.replayMatching(what, options, signal));
  }

  /**
   * The app stops: replays are refused from now on, a bulk replay under way queues nothing
   * more; resolves once the replays under way have ended (what they queued stays queued).
   */
  endReplays(): Promise<void> {
    return this.runs.end();
  }

  /** Replays under way (bulk ones included). */
  get replaysUnderWay(): number {
    return this.runs.size;
  }

  private async replayOne(id: string, options: ReplayOptions): Promise<ReplayResult> {
    if (id === "") throw new ReplayError("app.events.replay: an event id is a non-empty string");
    checkReplayOptions(options, false);
    const history = this.host.history();
    if (options.task !== undefined) this.knownTask(options.task);
    const event = await noted(history, id);
    if (event === undefined) throw new ReplayError(`cannot replay event "${id}": it is not in the history (never received here, or pruned)`);
    const result = await this.replayEvent(history, event, options.task);
    await history.flush();
    return result;
  }

  private async replayMatching(filter: ReplayFilter, options: BulkReplayOptions, signal: AbortSignal): Promise<BulkReplayResult> {
    if (typeof filter !== "object" || filter === null) throw new ReplayError("app.events.replay: pass an event id, or a filter { source?, task?, status?, since?, until?, search? }");
    for (const key of ["limit", "cursor"] as const) {
      if ((filter as HistoryQuery)[key] !== undefined) throw new ReplayError(`app.events.replay: a replay by filter takes every matching event; leave out ${key}`);
    }
    checkReplayOptions(options, true);
    const history = this.host.history();
    checkHistoryQuery(filter);
    const target = options.task === undefined ? undefined : this.knownTask(options.task);
    const rate = options.ratePerSecond ?? DEFAULT_REPLAY_RATE;
    const dryRun = options.dryRun === true;
    // A named task replays only events of the origin it takes (its source, or its queue).
    const query: HistoryQuery = target?.source !== undefined ? { ...filter, source: this.sourceFor(filter, target) } : filter;
    try {
      return await replayEach(history, query, {
        dryRun,
        ratePerSecond: rate,
        signal,
        takes: target === undefined ? undefined : (summary) => takes(target, summary.origin),
        // By status: the deliveries in it, not the event's other tasks (one that succeeded would run it twice).
        replay: async (event) => {
          // By status dead, the dead letters still held: one replayed or discarded since is not run again.
          const original = filter.status === "dead" && options.task === undefined ? await withHeldDeadLetters(this.host.store(), event) : event;
          const replay = await this.replayEvent(history, original, options.task, filter.status);
          if (options.onReplayed !== undefined) await this.told(options.onReplayed, event, replay);
        },
        skipped: (event, error) => this.host.logger.warn({ eventId: event.id, err: error }, "replay: this event is skipped"),
      });
    } catch (error) {
      if (error instanceof ReplayStoppedError) this.host.logger.warn({ matched: error.matched, queued: error.queued }, "replay: the app is stopping; the bulk replay stops here, the replays it queued stay queued");
      throw error;
    }
  }

  /** The caller's hook after one replay of a bulk replay: what it throws is logged, not the bulk replay's end. */
  private async told(onReplayed: NonNullable<BulkReplayOptions["onReplayed"]>, original: HistoryEvent, replay: ReplayResult): Promise<void> {
    try {
      await onReplayed(original, replay);
    } catch (error) {
      this.host.logger.warn({ eventId: original.id, replay: replay.id, err: error }, "replay: onReplayed threw; the bulk replay goes on");
    }
  }

  /** Stores a fresh copy (no attempts yet) for each task, then notes the replay, linked to its original. */
  private replayEvent(history: HistoryStore, event: HistoryEvent, task: string | undefined, status?: EventStatus): Promise<ReplayResult> {
    const targets = task !== undefined ? [this.targetFor(event, task)] : event.status === "unrouted" ? this.routedNow(event) : this.targetsOf(event, status);
    return queueReplay(this.host.store(), history, event, targets);
  }

  /**
   * An unrouted event routed as ingest would route it now: every task on its source whose `on`
   * and filter take it, in the order the tasks were added. None: refused, saying so.
   */
  private routedNow(event: HistoryEvent): ReplayTarget[] {
    const { origin } = event;
    const onSource: ReplayTarget[] = [];
    for (const name of this.host.taskNames()) {
      const target = this.host.target(name);
      if (target !== undefined && takes(target, origin)) onSource.push(target);
    }
    const targets = onSource.filter((target) => {
      try {
        return target.accepts === undefined || runFilter(target.accepts, event.payload, target.name);
      } catch (error) {
        if (error instanceof FilterError) throw new ReplayError(`cannot replay event "${event.id}": ${error.message}`, { cause: error });
        throw error;
      }
    });
    if (targets.length > 0) return targets;
    const tasks = onSource.length === 0 ? `this app has no task on ${describeOrigin(origin)}` : `none of the tasks on ${describeOrigin(origin)} (${onSource.map((t) => `"${t.name}"`).join(", ")}) takes it now`;
    throw new ReplayError(`cannot replay event "${event.id}": it was unrouted (no task took it), and ${tasks}; add a task whose on and filter take it, or name one with { task }`);
  }

  /** The tasks the event was handed to (those whose delivery is in `status`, when given), as this app has them now. */
  private targetsOf(event: HistoryEvent, status?: EventStatus): ReplayTarget[] {
    const targets: ReplayTarget[] = [];
    for (const delivery of event.deliveries) {
      if (status !== undefined && delivery.status !== status) continue;
      const target = this.host.target(delivery.task);
      if (target !== undefined && takes(target, event.origin) && !targets.includes(target)) targets.push(target);
    }
    if (targets.length === 0 && status !== undefined && !event.deliveries.some((d) => d.status === status)) {
      throw new ReplayError(`cannot replay event "${event.id}": none of its deliveries is ${status} any more`);
    }
    if (targets.length === 0) {
      const named = event.deliveries.map((d) => `"${d.task}"`).join(", ");
      throw new ReplayError(`cannot replay event "${event.id}": ${named === "" ? "no task took it" : `none of the tasks it was handed to (${named}) takes ${describeOrigin(event.origin)} in this app`}; name one with { task }`);
    }
    return targets;
  }

  private targetFor(event: HistoryEvent, task: string): ReplayTarget {
    const target = this.knownTask(task);
    if (!takes(target, event.origin)) {
      throw new ReplayError(`cannot replay event "${event.id}" to task "${task}": the event came from ${describeOrigin(event.origin)}, and the task takes ${describeTarget(target)}`);
    }
    return target;
  }

  private knownTask(task: string): ReplayTarget {
    if (typeof task !== "string" || task === "") throw new ReplayError("app.events.replay: options.task must be a task's name");
    const target = this.host.target(task);
    if (target !== undefined) return target;
    const names = this.host.taskNames();
    const guess = didYouMean(task, names);
    throw new ReplayError(`app.events.replay: no task "${task}" in this app${guess ? ` (did you mean "${guess}"?)` : ""}; its tasks: ${names.join(", ") || "none"}`);
  }

  private sourceFor(filter: ReplayFilter, target: ReplayTarget): string {
    if (filter.source !== undefined && filter.source !== target.source) {
      throw new ReplayError(`app.events.replay: task "${target.name}" takes ${describeTarget(target)}, not the events of source "${filter.source}"`);
    }
    return target.source!;
  }
}

function takes(target: ReplayTarget, origin: EventOrigin): boolean {
  return origin.kind === "webhook" ? target.source === origin.source : target.input === origin.queue;
}

function describeOrigin(origin: EventOrigin): string {
  return origin.kind === "webhook" ? `source "${origin.source}"` : `queue "${origin.queue}"`;
}

function describeTarget(target: ReplayTarget): string {
  return target.source !== undefined ? `the events of source "${target.source}"` : `the values of queue "${target.input}"`;
}

function checkReplayOptions(options: BulkReplayOptions, bulk: boolean): void {
  if (typeof options !== "object" || options === null) throw new ReplayError("app.events.replay: options must be an object");
  const allowed = bulk ? ["task", "dryRun", "ratePerSecond", "onReplayed"] : ["task"];
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      const why = !bulk && (key === "dryRun" || key === "ratePerSecond" || key === "onReplayed") ? ` (${key} is for a replay by filter)` : "";
      throw new ReplayError(`app.events.replay: unknown option "${key}"${why}; it takes ${allowed.join(", ")}`);
    }
  }
  const { dryRun, ratePerSecond, onReplayed } = options;
  if (onReplayed !== undefined && typeof onReplayed !== "function") throw new ReplayError("app.events.replay: onReplayed must be a function");
  if (dryRun !== undefined && typeof dryRun !== "boolean") throw new ReplayError("app.events.replay: dryRun must be true or false");
  if (ratePerSecond !== undefined && (typeof ratePerSecond !== "number" || !Number.isFinite(ratePerSecond) || ratePerSecond <= 0)) {
    throw new ReplayError(`app.events.replay: ratePerSecond must be a number > 0, got ${String(ratePerSecond)}`);
  }
}

/**
 * The event by id, counting this process's notes not written yet: an id just answered in a
 * `202` is found at once, not only after the background writer's next batch.
 */
async function noted(history: HistoryStore, id: string): Promise<HistoryEvent | undefined> {
  const event = await history.get(id);
  if (event !== undefined) return event;
  await history.flush();
  return history.get(id);
}
