import type { Express } from "express";
import { ListenerRegistry } from "../http/listener-registry";
import type { ListenerTimeouts } from "../http/listener";
import { compileTrust, type TrustProxy } from "../http/trust-proxy";
import { checkStoreSpec, createStore, storeFromEnv, type StoreSpec } from "../store/create-store";
import { StoreRefusedError, storeFailureDetail } from "../store/store-errors";
import { DEDUPE_NAMESPACE_PREFIX, type DeadLetterStore, type EmitRecord, type QueuedMessage, type StateStore, type Store } from "../store/store";
import { createDefaultLogger, errorMessage, LOG_LEVELS, type Logger, type LogLevel } from "../util/logger";
import { OutcomeRegistry } from "./outcome-registry";
import type { Queue } from "./queue";
import type { TaskHandler, TaskOptions, TaskSource } from "./task";
import type { BatchCheckedHandler, EmittableResult, ResultCheckedHandler } from "./handler-result";
import type { BatchOptions } from "./flow/group-options";
import type { TaskContext } from "./task-context";
import { SourceInbox } from "./source-inbox";
import { TaskRegistry, type RegisteredTask } from "./task-registry";
import { TaskRunner } from "./task-runner";
import { GroupRunner } from "./flow/group-runner";
import { PARSER_MODES, type ParserMode, type WebhookEvent } from "../sources/webhook/webhook-event";
import type { WebhookSource } from "../sources/webhook/webhook-source";
import type { SenderEvent, TypedSender, UntypedOn } from "../sources/webhook/event-names/event-types";
import type { DeliveryOutcome, Source } from "../sources/source";
import type { Registry } from "prom-client";
import { AppObservability, type ObservabilityOptions } from "../observe/app-observability";
import type { Readiness } from "../observe/health";
import type { AppEventListener, AppEventName } from "./app-events";
import { appStatus, type AppStatus } from "./app-status";
import { queuesOfApp, warnLeftBehind } from "./left-behind";
import { warnWhatIsLost } from "./memory-loss";
import { warnUnauthenticated } from "./unauthenticated-sources";
import { flowQueueStats, type FlowQueueStats } from "./flow/flow-stats";
import { FLOW_RECORDS_NAMESPACE, recordTaskFlows } from "./flow/flow-record";
import { CONSOLE_BULK_REPLAYS } from "../console/bulk-replays";
import { CONSOLE_SIGN_OUTS } from "../console/console-sign-outs";
import { exitCannotStart } from "./exit-cannot-start";
import { RunSignals } from "./run-signals";
import { settledWithin } from "../util/settled-within";
import type { EventsApi } from "./events-api";
import type { HistoryOptions } from "./history-options";
import { AppHistory } from "./app-history";
import { resolveConsoleOptions, type ConsoleOptions, type ResolvedConsoleOptions } from "../console/console-options";
import { mountConsole, placeConsole, type MountedConsole } from "../console/mount-console";
import type { ConsoleBackend } from "../console/console-backend";

export interface CoreAppOptions extends ObservabilityOptions {
  /**
   * Where queues, state and dead letters live: "memory", "embedded" (on disk, durable), a
   * postgres:// URL (shared by replicas), or a store instance. Default $WEBHOOK_TASKS_STORE, else "embedded".
   */
  store?: StoreSpec;
  /** Directory of the embedded store (default $WEBHOOK_TASKS_DATA_DIR, else ./.data/<app name>). */
  dataDir?: string;
  /** Most messages a queue may hold before sources answer 503 (memory: 100,000, its dead letters included; embedded: 10,000,000). */
  maxQueued?: number;
  /** Most bytes the embedded store may occupy before sources answer 503 (default: only the disk limits it); on the memory store, its dead letters. */
  maxBytes?: number;
  logger?: Logger;
  /** Level of the default logger (default $WEBHOOK_TASKS_LOG_LEVEL, else "info"; ignored when `logger` is given). */
  logLevel?: LogLevel;
  /** Proxies trusted to name the client, for every source that does not set its own. */
  trustProxy?: TrustProxy;
  /** How long stop() waits for requests, tasks and replays in flight (default 10 s); the store's close gets at most a second more (PostgreSQL). */
  shutdownTimeoutMs?: number;
  /**
   * On SIGTERM/SIGINT (`run()`), how long readiness answers 503 before the drain starts, so
   * that load balancers stop sending first (default 5 s with `health`, else 0).
   */
  shutdownDelayMs?: number;
  /** Timeouts of the HTTP listeners. */
  http?: ListenerTimeouts;
  /**
   * The event history (`app.events`): every accepted event with each run of each task, kept
   * `retainMs` (default 7 days) and at most `maxEvents` (the memory store: 10,000 by default).
   * `false`: nothing is recorded.
   */
  history?: HistoryOptions | boolean;
  /**
   * The web console (docs/console.md): `true` serves it on 127.0.0.1:9400, or say where and
   * how; a host other than a loopback one needs `auth`. Default off.
   */
  console?: boolean | ConsoleOptions;
}

/** What `app.storeSettings` gives: the store an app opens, and the embedded store's settings. */
export interface AppStoreSettings {
  readonly store: StoreSpec;
  readonly dataDir: string | undefined;
  readonly maxQueued: number | undefined;
  readonly maxBytes: number | undefined;
  /** The `history` option as given (`false`: the store's history is not kept, nor shown by the CLI). */
  readonly history: HistoryOptions | boolean | undefined;
}

/** How long past the stop's timeout the history's last notes and the store's close may take, together. */
const CLOSE_GRACE_MS = 1_000;
/** The least the store's close is given, however late it starts. */
const MIN_CLOSE_MS = 250;

/** The store an app uses unless told otherwise. */
export const DEFAULT_STORE = "embedded" as const;

type AppState = "new" | "starting" | "running" | "stopping" | "stopped";

/**
 * An application: tasks, their sources and the store between them. `start()` opens the store,
 * attaches sources, starts listeners and runners; `stop()` undoes it gracefully.
 */
export class CoreApp {
  readonly name: string;
  readonly logger: Logger;
  private options: CoreAppOptions;
  private readonly registry = new TaskRegistry();
  private readonly listeners: ListenerRegistry;
  private readonly outcomes = new OutcomeRegistry();
  private runners: Array<TaskRunner | GroupRunner> = [];
  /** The sources' inboxes: stop() waits for their writes in flight. */
  private inboxes: SourceInbox[] = [];
  private appState: AppState = "new";
  private storeInstance: Store | undefined;
  private starting: Promise<this> | undefined;
  /** The start failed (the app is then stopped): told to a later start(). */
  private startFailed = false;
  private stopping: Promise<void> | undefined;
  private readonly observability: AppObservability;
  /** Set by a shutdown signal or stop(): readiness turns 503 before anything closes. */
  private shuttingDown = false;
  /** The app's Prometheus registry when `metrics` is on (yours, if you gave one). */
  readonly metrics: Registry | undefined;
  /** The event history: list and show accepted events with their runs, replay any of them. */
  readonly events: EventsApi;
  private readonly history: AppHistory;
  private readonly consoleOptions: ResolvedConsoleOptions | undefined;
  private mountedConsole: MountedConsole | undefined;
  /** Set by configureForTest: a test's stop drops its memory store's leftovers on purpose. */
  private underTest = false;
  /** run()'s SIGINT and SIGTERM handlers, removed once the app has stopped. */
  private runSignals: RunSignals | undefined;

  constructor(name: string, options: CoreAppOptions = {}) {
    // Dots alone ("." or "..") would put the store in .data itself or in the project's directory.
    if (typeof name !== "string" || !/^(?!\.+$)[A-Za-z0-9_.-]{1,100}$/.test(name)) {
      throw new TypeError(`CoreApp: name must be 1-100 letters, digits or _ . -, not dots alone (it names the data directory), got ${JSON.stringify(name)}`);
    }
    this.name = name;
    if (options.store !== undefined) checkStoreSpec(options.store);
    this.options = options;
    this.logger = options.logger ?? createDefaultLogger(options.logLevel === undefined ? levelFromEnv() : checkLevel(options.logLevel, `logLevel ${JSON.stringify(options.logLevel)}`), { app: name });
    this.listeners = new ListenerRegistry(options.http);
    this.observability = new AppObservability(options, this.logger, {
      queues: () => this.registry.queues(),
      stats: (queue) => (this.appState === "running" && this.storeInstance !== undefined ? this.queueStats(this.storeInstance, queue) : undefined),
      storeUp: () => (this.appState === "running" && this.storeInstance !== undefined ? { engine: this.storeInstance.engine, up: this.storeInstance.failure === undefined } : undefined),
      tasksPaused: () => {
        if (this.appState !== "running") return [];
        const rows: Array<readonly [string, boolean]> = [];
        for (const task of this.registry.all()) {
          const paused = this.history.pausedNow(task.name);
          if (paused !== undefined) rows.push([task.name, paused]);
        }
        return rows;
      },
    });
    this.metrics = this.observability.registry;
    this.history = new AppHistory(options.history, {
      name,
      logger: this.logger,
      store: () => this.store,
      registry: this.registry,
      sourceLabel: (source, tasks) => this.sourceLabels(source, tasks).name,
    });
    this.events = this.history.events;
    this.consoleOptions = resolveConsoleOptions(options.console);
  }

  /**
   * Pauses a task: its events are still accepted and stored, none runs until it is resumed
   * (runs under way finish). Kept in the store: it holds across restarts on a durable store
   * and, on PostgreSQL, on every replica.
   */
  pause(task: string): Promise<void> {
    return this.history.setPaused(task, true);
  }

  /** Resumes a paused task: its waiting events run at once. */
  resume(task: string): Promise<void> {
    return this.history.setPaused(task, false);
  }

  /** The paused tasks' names, sorted. */
  paused(): Promise<string[]> {
    return this.history.paused();
  }

  /** Listens to the app's events: "deadLetter" and "retry" (for alerts), after the store recorded them. */
  on<K extends AppEventName>(event: K, listener: AppEventListener<K>): this {
    this.observability.events.on(event, listener);
    return this;
  }

  off<K extends AppEventName>(event: K, listener: AppEventListener<K>): this {
    this.observability.events.off(event, listener);
    return this;
  }

  /** What /readyz answers: started, store healthy, not shutting down. */
  readiness(): Readiness {
    const failure = this.storeInstance?.failure;
    const started = this.appState === "running" || this.appState === "stopping";
    const checks = {
      started: { ok: started },
      store: this.storeInstance === undefined ? { ok: false, detail: "not open" } : failure === undefined ? { ok: true } : { ok: false, detail: "cannot write" },
      notShuttingDown: { ok: !this.shuttingDown && this.appState !== "stopping" && this.appState !== "stopped" },
    };
    return { ready: checks.started.ok && checks.store.ok && checks.notShuttingDown.ok, checks };
  }

  /** Per queue: depth, oldest age, in flight, dead letters, and the tasks consuming or feeding it. */
  status(): Promise<AppStatus> {
    const store = this.appState === "running" ? this.storeInstance : undefined;
    return appStatus(this.name, this.registry.all(), store, this.readiness(), store && ((queue) => this.queueStats(store, queue)));
  }

  /** A debounced or batched task takes groups (flow/group-runner.ts, which refuses a store that cannot claim them); any other, single events. */
  private runnerOf(task: RegisteredTask, store: Store): TaskRunner | GroupRunner {
    const { observer, tracing } = this.observability;
    if (task.group !== undefined) return new GroupRunner(task, { app: this, store, outcomes: this.outcomes, observer, tracing, history: this.history.runs(task) });
    return new TaskRunner(task, this, store, this.outcomes, task.logger, observer, tracing, this.history.runs(task));
  }

  /**
   * Notes the tasks' flow limits in the store, for the CLI's replays with --store (flow-record.ts).
   * A store that cannot write now leaves them unnoted: such a replay is then refused, never queued
   * outside its limits, so the app starts all the same.
   */
  private async recordFlows(store: Store, tasks: readonly RegisteredTask[]): Promise<void> {
    try {
      await recordTaskFlows(store.state(FLOW_RECORDS_NAMESPACE), tasks);
    } catch (error) {
      this.logger.warn({ error: errorMessage(error) }, "could not note the tasks' flow limits in the store: the CLI will not replay into them with --store");
    }
  }

  /** A queue's figures with its task's flow limits (flow-stats.ts). */
  private queueStats(store: Store, queue: string): Promise<FlowQueueStats> {
    return flowQueueStats(store, queue, this.runners.find((r) => r.queue === queue));
  }

  /**
   * Registers a task. Its handler gets `(ctx, event)`; its return value goes to `emit`. With a
   * typed `Queue<T>` as source the event is a `T`; with a `Queue<R>` as emit the handler returns an `R`.
   */
  task<T, R = unknown, const H extends EmittableResult<R> = EmittableResult<R>>(options: TaskOptions<Queue<T>, R> & { batch: BatchOptions<T> }, handler: BatchCheckedHandler<T, H>): this;
  task<X extends TypedSender, P extends string, R = unknown, const H extends EmittableResult<R> = EmittableResult<R>>(
    options: TaskOptions<WebhookSource<X>, R, SenderEvent<X, NoInfer<P>>> & { on: P | readonly P[]; batch: BatchOptions<SenderEvent<X, NoInfer<P>>> },
    handler: BatchCheckedHandler<SenderEvent<X, P>, H>,
  ): this;
  task<E = WebhookEvent, R = unknown, S extends Source = Source, const H extends EmittableResult<R> = EmittableResult<R>>(
    options: TaskOptions<S, R, NoInfer<E>> & { batch: BatchOptions<NoInfer<E>> } & UntypedOn<S>,
    handler: BatchCheckedHandler<E, H>,
  ): this;
  task<E = unknown, R = unknown, S extends Source | string = Source | string, const H extends EmittableResult<R> = EmittableResult<R>>(
    options: TaskOptions<S, R, NoInfer<E>> & { batch: BatchOptions<NoInfer<E>> } & UntypedOn<S>,
    handler: BatchCheckedHandler<E, H>,
  ): this;
  // `batch` takes the overloads above, whose handler takes an array: refused here, not typed as one event.
  task<T, R = unknown, const H extends EmittableResult<R> = EmittableResult<R>>(options: TaskOptions<Queue<T>, R> & { batch?: undefined }, handler: ResultCheckedHandler<T, H>): this;
  task<X extends TypedSender, P extends string, R = unknown, const H extends EmittableResult<R> = EmittableResult<R>>(
    options: TaskOptions<WebhookSource<X>, R, SenderEvent<X, NoInfer<P>>> & { on: P | readonly P[]; batch?: undefined },
    handler: ResultCheckedHandler<SenderEvent<X, P>, H>,
  ): this;
  task<E = WebhookEvent, R = unknown, S extends Source = Source, const H extends EmittableResult<R> = EmittableResult<R>>(
    options: TaskOptions<S, R, NoInfer<E>> & UntypedOn<S>,
    handler: ResultCheckedHandler<E, H>,
  ): this;
  /** A queue named by a plain string, or a source that may be either (`Source | string`): its values are untyped (`unknown`) unless the handler says what it takes. */
  task<E = unknown, R = unknown, S extends Source | string = Source | string, const H extends EmittableResult<R> = EmittableResult<R>>(
    options: TaskOptions<S, R, NoInfer<E>> & UntypedOn<S>,
    handler: ResultCheckedHandler<E, H>,
  ): this;
  task(options: TaskOptions<TaskSource, unknown, never>, handler: (ctx: TaskContext<never>, event: never) => unknown): this {
    if (this.appState !== "new") throw new Error(`CoreApp "${this.name}": tasks must be added before start()`);
    this.registry.add(options, handler as TaskHandler<never, unknown>, { state: unopenedState, logger: this.logger });
    return this;
  }

  /**
   * @internal The copies of a value emitted to the named queue `queue`: one per consuming task
   * whose filter takes it, in its physical queue with its ordering key (none when no filter
   * takes it). Throws FilterError or OrderingKeyError.
   */
  copiesFor(queue: string, message: QueuedMessage): EmitRecord[] {
    return this.registry.copiesFor(queue, message);
  }

  /** Registered tasks, in order. */
  get tasks(): ReadonlyArray<Pick<RegisteredTask, "name" | "queue" | "input" | "emit" | "source" | "concurrency" | "flow" | "retry" | "group">> {
    return this.registry.all();
  }

  /**
   * Where the app keeps its queues, resolved as start() resolves it (the `store` option, else
   * $WEBHOOK_TASKS_STORE, else "embedded") with the embedded store's settings. Read-only; for
   * tools that open the store without starting the app, such as `webhook-tasks status --module`.
   */
  get storeSettings(): AppStoreSettings {
    const { store, dataDir, maxQueued, maxBytes, history } = this.options;
    return Object.freeze({ store: store ?? storeFromEnv() ?? DEFAULT_STORE, dataDir, maxQueued, maxBytes, history });
  }

  /** The store; available after start(). */
  get store(): Store {
    if (!this.storeInstance) throw new Error(`CoreApp "${this.name}": the store is open only between start() and stop()`);
    return this.storeInstance;
  }

  get deadLetters(): DeadLetterStore {
    return this.store.deadLetters;
  }

  /** State outside any task (a task's own is `ctx.state`). */
  state(namespace: string): StateStore {
    return this.store.state(`app:${namespace}`);
  }

  get running(): boolean {
    return this.appState === "running";
  }

  /**
   * The Express application serving host:port (the same host and port as your sources; port
   * 0 is the listener of the sources with port 0 on that host), for your own middleware and
   * routes (health checks, admin pages). Add them before start(); webhook paths are matched first.
   */
  express(host: string, port: number): Express {
    // Express's own 404 handler is mounted at start(): a route added later would never answer.
    if (this.appState !== "new") throw new Error(`CoreApp "${this.name}": app.express() is for adding routes and middleware before start(); the app has started, and a route added now would never be reached`);
    return this.listeners.get(host, port).express;
  }

  /**
   * Before start(): what webhook-tasks/testing sets for a test run: another store (a memory
   * store, say) and listeners on free ports instead of the configured ones.
   */
  configureForTest(options: { store?: StoreSpec; freePorts?: boolean }): this {
    if (this.appState !== "new") throw new Error(`CoreApp "${this.name}": configureForTest() must come before start()`);
    if (options.store !== undefined) {
      checkStoreSpec(options.store);
      this.options = { ...this.options, store: options.store };
    }
    if (options.freePorts) this.listeners.bindFreePorts();
    this.underTest = true;
    return this;
  }

  /** Calls `listener` with the outcome of every task run (success or failure), as it is recorded. */
  onOutcome(listener: (eventId: string, outcome: DeliveryOutcome) => void): () => void {
    return this.outcomes.observe(listener);
  }

  /**
   * Checks what start() would refuse, without opening the store or listening: two sources on
   * one method and path of a host:port (throws an Error naming both), and a console without
   * `auth` on a non-loopback host or on a place a source takes.
   */
  check(): void {
    const dryRun = new ListenerRegistry(this.options.http);
    const attached: Source[] = [];
    const noStore = (): never => {
      throw new Error("check(): the store is not opened");
    };
    try {
      this.checkSourceLabels();
      for (const source of this.registry.sources()) {
        const tasks = this.registry.subscribersOf(source).map((t) => t.name);
        const inbox = { ...this.sourceLabels(source, tasks), tasks, admit: () => undefined, route: noStore, accept: noStore, expect: noStore, state: () => unopenedState };
        source.attach(inbox, { listeners: dryRun, trustProxy: this.options.trustProxy, logger: this.logger });
        attached.push(source);
      }
      if (this.consoleOptions !== undefined) placeConsole(dryRun, this.consoleOptions);
    } finally {
      for (const source of attached) source.detach();
    }
  }

  /**
   * A source's label (its name, else its lone task's) and the namespace of its deduplication
   * markers: a lone task's keeps the markers written before sources could feed several tasks.
   */
  private sourceLabels(source: Source, tasks: readonly string[]): { name: string; dedupeNamespace: string } {
    const name = source.sourceName ?? tasks[0];
    return { name, dedupeNamespace: tasks.length === 1 ? `${DEDUPE_NAMESPACE_PREFIX}${tasks[0]}` : `${DEDUPE_NAMESPACE_PREFIX}source:${name}` };
  }

  /**
   * Two sources feeding several tasks each under one label (one path on two ports or hosts,
   * paths that differ only in characters a label replaces) would share their deduplication
   * markers: an event id seen by one would be a repeat at the other. Refused, naming both.
   */
  private checkSourceLabels(): void {
    const seen = new Map<string, Source>();
    for (const source of this.registry.sources()) {
      const tasks = this.registry.subscribersOf(source).map((t) => t.name);
      const { name, dedupeNamespace } = this.sourceLabels(source, tasks);
      const other = seen.get(dedupeNamespace);
      if (other !== undefined) {
        throw new Error(`${other.describe()} and ${source.describe()} feed several tasks each under one label "${name}": their deduplication markers and metrics would mix; give one of them another path`);
      }
      seen.set(dedupeNamespace, source);
    }
  }

  start(): Promise<this> {
    if (this.appState !== "new") {
      // A retry after a failed start (the port freed since, say) must build a new app: say so.
      const why = this.startFailed ? "its start failed, and an app starts once" : this.appState === "stopped" || this.appState === "stopping" ? "it was stopped, and an app starts once" : "it is started already";
      return Promise.reject(new Error(`CoreApp "${this.name}" cannot start: ${why}${why.endsWith("once") ? "; build a new app to start again" : ""}`));
    }
    this.appState = "starting";
    this.starting = this.open();
    this.starting.catch(() => (this.startFailed = true));
    return this.starting;
  }

  private async open(): Promise<this> {
    const tasks = this.registry.all();
    if (tasks.length === 0) this.logger.warn("the app has no tasks");
    const store = this.observability.wrapStore(createStore(this.storeSettings.store, {
      appName: this.name,
      dataDir: this.options.dataDir,
      maxQueued: this.options.maxQueued,
      maxBytes: this.options.maxBytes,
      logger: this.logger,
      historyMaxEvents: this.history.maxEvents,
    }));
    const attached: Source[] = [];
    try {
      this.checkSourceLabels();
      await store.open();
      this.storeInstance = store;
      if (store.failure !== undefined) {
        // Sources answer 503 until the store recovers; say why, once, loudly.
        this.logger.error({ store: store.engine, error: store.failure.message }, "the store cannot write: webhooks are answered 503 until it can");
      }
      for (const task of tasks) {
        task.state = store.state(`task:${task.name}`);
        task.logger = this.logger.child({ task: task.name });
      }
      await this.recordFlows(store, tasks);
      this.history.opened(store, tasks);
      const sourceOfTask = new Map<string, string>();
      // One inbox per source, for every task it feeds: one route, one write per event.
      for (const source of this.registry.sources()) {
        const subscribers = this.registry.subscribersOf(source);
        const names = subscribers.map((t) => t.name);
        const { name, dedupeNamespace } = this.sourceLabels(source, names);
        const logger = subscribers.length === 1 ? subscribers[0].logger : this.logger.child({ source: name });
        // A source given more tasks keeps reading the markers its lone task wrote before.
        const earlier = names.length > 1 ? names.map((t) => `${DEDUPE_NAMESPACE_PREFIX}${t}`) : [];
        for (const task of names) sourceOfTask.set(task, name);
        const inbox = new SourceInbox(name, dedupeNamespace, subscribers, store, this.outcomes, logger, earlier, this.history.inbox(name, subscribers, logger, bodyParserOf(source)));
        this.inboxes.push(inbox);
        source.attach(this.observability.wrapInbox(inbox), {
          listeners: this.listeners,
          trustProxy: this.options.trustProxy,
          logger,
          observer: this.observability.watchesRequests ? this.observability.observer : undefined,
          tracing: this.observability.tracing,
        });
        attached.push(source);
      }
      for (const { task, queue } of this.registry.unconsumedEmits()) {
        this.logger.warn(`task "${task}" emits to queue "${queue}", which no task consumes: its messages will wait in the store`);
      }
      this.runners = tasks.map((task) => this.runnerOf(task, store));
      // Read before the runners start: a task paused before a restart claims nothing.
      await this.history.startPauses(store, new Map(tasks.map((t, i) => [t.name, this.runners[i]])));
      this.observability.mount(this.listeners, () => this.readiness());
      // After the probes and metrics: the console's own listener serves the console alone.
      if (this.consoleOptions !== undefined) {
        this.mountedConsole = mountConsole(this.listeners, this.consoleOptions, this.consoleBackend(tasks.map((t) => ({ name: t.name, source: sourceOfTask.get(t.name), input: t.input, queue: t.queue }))), this.logger, this.options.trustProxy === undefined ? undefined : compileTrust(this.options.trustProxy));
      }
      await this.listeners.listenAll();
    } catch (error) {
      for (const source of attached) source.detach();
      this.inboxes = [];
      await this.history.stop(0);
      this.storeInstance = undefined;
      await store.close().catch(() => undefined);
      this.appState = "stopped";
      // "The store cannot reach its database" says nothing of where or why: the driver's cause does.
      if (error instanceof StoreRefusedError && error.cause !== undefined) throw new Error(`${error.message} (${storeFailureDetail(error)})`, { cause: error });
      throw error;
    }
    for (const runner of this.runners) runner.start();
    this.history.started();
    this.appState = "running";
    this.logger.info(
      {
        store: store.engine,
        listeners: this.listeners.all().map((l) => l.origin),
        tasks: tasks.map((t) => t.name),
      },
      "started",
    );
    if (this.mountedConsole !== undefined) this.logger.info({ url: this.mountedConsole.url }, "console ready");
    warnUnauthenticated(this.registry.sources(), this.logger);
    void warnLeftBehind(store, queuesOfApp(tasks), this.logger);
    return this;
  }

  /** The web console's address ("http://127.0.0.1:9400/") while the app runs with `console` on. */
  get consoleUrl(): string | undefined {
    return this.appState === "running" || this.appState === "stopping" ? this.mountedConsole?.url : undefined;
  }

  /** What the console may read and do: the app's public methods, nothing of the store's insides. */
  private consoleBackend(tasks: ConsoleBackend["tasks"]): ConsoleBackend {
    const history = this.options.history === false ? undefined : this.storeInstance?.history;
    return {
      appName: this.name,
      events: this.events,
      status: () => this.status(),
      activity: async (since, bucketMs) => (history === undefined ? [] : history.activity(since, bucketMs)),
      historyEnabled: history !== undefined,
      paused: async () => new Set(await this.paused()),
      pause: (task) => this.pause(task),
      resume: (task) => this.resume(task),
      deadLetters: this.deadLetters,
      tasks,
      signOuts: this.storeInstance?.state(CONSOLE_SIGN_OUTS),
      bulkReplays: this.storeInstance?.state(CONSOLE_BULK_REPLAYS),
    };
  }

  /**
   * Graceful stop: listeners stop accepting and finish requests in flight, runners stop
   * claiming and let running handlers finish (up to `timeoutMs`), then the store closes.
   * Work not finished stays in a durable store for the next start.
   */
  stop(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.stopping) return this.stopping;
    if (this.appState === "new" || this.appState === "stopped") {
      this.appState = "stopped";
      return Promise.resolve();
    }
    this.shuttingDown = true;
    // From here on a replay is refused, and a bulk replay under way queues nothing more.
    const replaysEnded = this.endReplays();
    const timeoutMs = options.timeoutMs ?? this.options.shutdownTimeoutMs ?? 10_000;
    // Stopped while starting: let the start finish (or fail), then undo it.
    const started = this.appState === "starting" ? this.starting!.then(() => true, () => false) : Promise.resolve(true);
    this.stopping = started.then((ok) => (ok ? this.shutdown(timeoutMs, replaysEnded) : undefined)).finally(() => this.runSignals?.remove());
    return this.stopping;
  }

  /**
   * Starts (unless started already), then stops gracefully on SIGINT or SIGTERM and exits the
   * process; a second signal exits at once. A start that fails (a port in use, a store that
   * cannot open) prints `cannot start: <why>` on stderr and exits 1, as the CLI does: run() is
   * the program's entry point, and an unhandled rejection would bury the reason in a stack.
   * Call start() first to handle that failure yourself. The signal handlers are removed once
   * the app has stopped.
   */
  async run(): Promise<void> {
    if (this.appState === "starting") {
      // Your own start(): its failure is yours to handle, run() adds no handlers then.
      await this.starting!.catch(() => undefined);
    } else if (this.appState !== "running") {
      // A stopped app too: start() says why it cannot start again.
      try {
        await this.start();
      } catch (error) {
        exitCannotStart(error);
      }
    }
    // Stopped meanwhile (stop() while it started), or run() twice: no handler to add.
    if (this.appState !== "running" || this.runSignals !== undefined) return;
    this.runSignals = new RunSignals({
      logger: this.logger,
      shutDown: () => (this.shuttingDown = true),
      delayMs: this.options.shutdownDelayMs ?? (this.observability.healthEnabled ? 5_000 : 0),
      stop: () => this.stop(),
    });
    this.runSignals.install();
  }

  /** The replays of `app.events` and of the console end (see ReplayRuns, BulkReplays); resolves once those under way have. */
  private async endReplays(): Promise<void> {
    await Promise.all([this.history.endReplays(), this.mountedConsole?.stop()]);
  }

  private async shutdown(timeoutMs: number, replaysEnded: Promise<void>): Promise<void> {
    this.appState = "stopping";
    this.shuttingDown = true;
    const deadline = Date.now() + timeoutMs;
    // Callers still waiting for a task (ack "processed", reply "result") get the fixed answer
    // shortly before the listeners cut connections at the deadline: their event is stored.
    const release = setTimeout(() => this.outcomes.releaseAll(), Math.max(0, timeoutMs - Math.min(1_000, timeoutMs / 4)));
    await this.listeners.closeAll(timeoutMs);
    clearTimeout(release);
    this.outcomes.releaseAll();
    // Events answered before their write (ack "received") are stored, and noted, before the store
    // closes; so is what the replays under way were writing (stopped before their next one).
    const inboxes = this.inboxes.splice(0);
    // Stopped while starting: the console was mounted after stop() told it.
    const writes = Promise.all([...inboxes.map((inbox) => inbox.settled()), replaysEnded, this.endReplays()]);
    if (!(await settledWithin(writes, deadline - Date.now())) && this.history.replaysUnderWay > 0) {
      this.logger.warn({ replays: this.history.replaysUnderWay }, "shutdown timeout: a replay was still writing; the store closes without waiting for it");
    }
    const remaining = Math.max(0, deadline - Date.now());
    await Promise.all(this.runners.map((r) => r.stop(remaining)));
    for (const source of this.registry.sources()) source.detach();
    // The notes of the last runs are written before the store closes (what is left of the time).
    await this.history.stop(deadline - Date.now());
    if (this.storeInstance !== undefined && !this.underTest) await warnWhatIsLost(this.storeInstance, this.logger);
    // A database that answers nothing is not waited for past the grace: the store gives up on it (PostgreSQL cuts its connections).
    await this.storeInstance?.close({ timeoutMs: Math.max(deadline + CLOSE_GRACE_MS - Date.now(), MIN_CLOSE_MS) });
    this.storeInstance = undefined;
    this.appState = "stopped";
    this.logger.info("stopped");
  }
}

/** $WEBHOOK_TASKS_LOG_LEVEL, else "info"; an unknown name is an error listing the valid ones. */
function levelFromEnv(): LogLevel {
  const level = process.env.WEBHOOK_TASKS_LOG_LEVEL;
  if (level === undefined || level === "") return "info";
  return checkLevel(level, `WEBHOOK_TASKS_LOG_LEVEL=${JSON.stringify(level)}`);
}

/** `level` when it is one of LOG_LEVELS; else an error showing it as `shown` and listing them (pino's own lists none). */
function checkLevel(level: unknown, shown: string): LogLevel {
  if (typeof level !== "string" || !(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new TypeError(`${shown} is not a log level: use one of ${LOG_LEVELS.join(", ")}`);
  }
  return level as LogLevel;
}

const notOpen = (): never => {
  throw new Error("ctx.state is available once the app has started");
};
const unopenedState: StateStore = { get: notOpen, set: notOpen, delete: notOpen, setIfAbsent: notOpen };

/** A webhook source's body parser (the history keeps the raw bytes alone when they give the body back). */
function bodyParserOf(source: Source): ParserMode | undefined {
  const parser = (source as { readonly kind?: string; readonly options?: { readonly parser?: unknown } }).options?.parser;
  return source.kind === "webhook" && typeof parser === "string" && (PARSER_MODES as readonly string[]).includes(parser) ? (parser as ParserMode) : undefined;
}
