import type { Source } from "../sources/source";
import type { ParserMode } from "../sources/webhook/webhook-event";
import type { HistoryStore } from "../store/history";
import type { Store } from "../store/store";
import { didYouMean } from "../util/did-you-mean";
import type { Logger } from "../util/logger";
import { settledWithin } from "../util/settled-within";
import { EventHistory, type ReplayTarget } from "./event-history";
import type { EventsApi } from "./events-api";
import type { Subscriber } from "./fan-out";
import { resolveHistoryOptions, type HistoryOptions, type ResolvedHistory } from "./history-options";
import { HistoryPruner } from "./history-pruner";
import { InboxHistory } from "./inbox-history";
import { RunHistory } from "./run-history";
import { TaskPauses, type Pausable } from "./task-pauses";
import type { RegisteredTask, TaskRegistry } from "./task-registry";

/** The least stop() waits for the history's last notes, however little of its time is left (half the app's grace past its timeout). */
const MIN_LAST_NOTES_MS = 500;

/** What the app's history and pauses need of the app. */
export interface AppHistoryHost {
  readonly name: string;
  readonly logger: Logger;
  /** The open store; throws when the app is not running. */
  store(): Store;
  readonly registry: TaskRegistry;
  /** A source's label, given the names of the tasks it feeds. */
  sourceLabel(source: Source, tasks: readonly string[]): string;
}

/**
 * The event history and the paused tasks of one app: what start() wires into the inboxes and
 * runners, the pruning timer, `app.events`, and pause/resume. CoreApp only calls in.
 */
export class AppHistory {
  readonly events: EventsApi;
  private readonly eventHistory: EventHistory;
  private readonly setting: ResolvedHistory;
  private history: HistoryStore | undefined;
  private targets = new Map<string, ReplayTarget>();
  private taskOfQueue = new Map<string, string>();
  private pruner: HistoryPruner | undefined;
  private pauses: TaskPauses | undefined;

  constructor(
    option: HistoryOptions | boolean | undefined,
    private readonly host: AppHistoryHost,
  ) {
    this.setting = resolveHistoryOptions(option, `CoreApp "${host.name}"`);
    this.events = this.eventHistory = new EventHistory({
      history: () => this.historyStore(),
      store: () => host.store(),
      target: (task) => this.targets.get(task),
      taskNames: () => host.registry.all().map((t) => t.name),
      logger: host.logger,
    });
  }

  /** The bound the memory store's history keeps by itself (`history.maxEvents`). */
  get maxEvents(): number | undefined {
    return this.setting.on ? this.setting.maxEvents : undefined;
  }

  /** The store is open: from now on, events and runs are noted (unless the history is off). */
  opened(store: Store, tasks: readonly RegisteredTask[]): void {
    this.history = this.setting.on ? store.history : undefined;
    if (this.setting.on && this.history === undefined) this.host.logger.warn({ store: store.engine }, "this store keeps no event history: app.events is not available");
    this.targets = this.targetsOf(tasks);
    this.taskOfQueue = new Map(tasks.map((t) => [t.queue, t.name]));
  }

  /** What a source's inbox tells of each stored event. */
  inbox(source: string, subscribers: readonly Subscriber[], logger: Logger, bodyParser?: ParserMode): InboxHistory | undefined {
    return this.history === undefined ? undefined : new InboxHistory(this.history, source, subscribers, logger, bodyParser);
  }

  /** What a task's runner tells of each run. */
  runs(task: RegisteredTask): RunHistory | undefined {
    if (this.history === undefined) return undefined;
    const { taskOfQueue } = this;
    return new RunHistory(this.history, task.name, task.emit, this.targets.get(task.name)?.sharesEvents ?? false, (queue) => taskOfQueue.get(queue), task.logger);
  }

  /** Reads the paused tasks before the runners start (a pause holds across restarts), then follows changes. */
  async startPauses(store: Store, runners: ReadonlyMap<string, Pausable>): Promise<void> {
    if (store.pauses === undefined) return;
    this.pauses = new TaskPauses(store.pauses, runners, this.host.logger);
    await this.pauses.start();
  }

  /** The runners are running: pruning starts, on its own timer. */
  started(): void {
    if (!this.setting.on || this.history === undefined) return;
    this.pruner = new HistoryPruner(this.history, this.setting.retainMs, this.setting.maxEvents, this.host.logger);
    this.pruner.start();
  }

  /**
   * The app stops: `app.events` refuses replays from now on, and a bulk replay under way queues
   * nothing more; resolves once the replays under way have ended.
   */
  endReplays(): Promise<void> {
    return this.eventHistory.endReplays();
  }

  /** Replays under way (bulk ones included). */
  get replaysUnderWay(): number {
    return this.eventHistory.replaysUnderWay;
  }

  /**
   * Before the store closes: no more pruning or pause changes; the last notes are written, for
   * up to `timeoutMs` (at least half a second). Past it the store's close gives them one more try: a
   * flush waiting out a failing database's retries would outlast the stop, and, its retry timer
   * being unref'd, could even let the process exit before stop() resolves.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.pauses?.stop();
    this.pauses = undefined;
    const pruner = this.pruner;
    this.pruner = undefined;
    const history = this.history;
    this.history = undefined;
    const last = (async () => {
      await pruner?.stop();
      await history?.flush().catch((error: unknown) => this.host.logger.warn({ err: error }, "cannot write the last notes of the event history"));
    })();
    const waitMs = Math.max(timeoutMs, MIN_LAST_NOTES_MS);
    if (!(await settledWithin(last, waitMs))) this.host.logger.warn({ waitedMs: waitMs }, "the event history's last notes are not written yet: the store tries them once more as it closes");
  }

  async setPaused(task: string, paused: boolean): Promise<void> {
    const verb = paused ? "pause" : "resume";
    const { registry, name } = this.host;
    if (typeof task !== "string" || registry.get(task) === undefined) {
      const names = registry.all().map((t) => t.name);
      const guess = typeof task === "string" ? didYouMean(task, names) : undefined;
      throw new Error(`app.${verb}(): no task ${JSON.stringify(task)} in app "${name}"${guess ? ` (did you mean "${guess}"?)` : ""}; its tasks: ${names.join(", ") || "none"}`);
    }
    const store = this.host.store();
    if (this.pauses === undefined) {
      // Stopped following pauses as the app stops, the store still open: not a store without pauses.
      if (store.pauses !== undefined) throw new Error(`app.${verb}(): app "${name}" is stopping`);
      throw new Error(`app.${verb}(): the ${store.engine} store keeps no paused tasks`);
    }
    await this.pauses.set(task, paused);
  }

  /** Whether `task` is paused in this process now, without a statement; undefined when the store keeps no pauses or is not open. */
  pausedNow(task: string): boolean | undefined {
    return this.pauses?.isPaused(task);
  }

  async paused(): Promise<string[]> {
    const pauses = this.host.store().pauses;
    return pauses === undefined ? [] : [...(await pauses.paused())].sort();
  }

  /** The store's history, or an error saying why there is none. */
  private historyStore(): HistoryStore {
    if (!this.setting.on) throw new Error(`app.events: the event history is off for app "${this.host.name}" (history: false)`);
    const store = this.host.store();
    if (store.history === undefined) throw new Error(`app.events: the ${store.engine} store keeps no event history`);
    return store.history;
  }

  /** What a replay needs of each task: its queue, the origin it takes, whether its queue holds copies. */
  private targetsOf(tasks: readonly RegisteredTask[]): Map<string, ReplayTarget> {
    const { registry } = this.host;
    const targets = new Map<string, ReplayTarget>();
    for (const task of tasks) {
      const source = task.source;
      const subscribers = source === undefined ? [] : registry.subscribersOf(source).map((t) => t.name);
      targets.set(task.name, {
        name: task.name,
        queue: task.queue,
        source: source === undefined ? undefined : this.host.sourceLabel(source, subscribers),
        input: task.input,
        sharesEvents: source !== undefined ? subscribers.length > 1 : task.input !== undefined && registry.consumersOf(task.input).length > 1,
        orderingKey: task.orderingKey,
        flow: task.flow,
        accepts: task.accepts,
        group: task.group,
      });
    }
    return targets;
  }
}
