import { collectDefaultMetrics, Gauge, type Registry } from "prom-client";
import { KeyedCounter, KeyedHistogram } from "./fast-metrics";
import type { QueueStats } from "../store/store";
import type { AppObserver, RequestOutcome, StoreWrite, TaskRunOutcome } from "./app-observer";

/** Seconds; webhook requests are answered in well under a second, task runs may take minutes. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const TASK_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

/** Where the queue gauges read from at scrape time. */
export interface QueueStatsSource {
  queues(): readonly string[];
  /** Undefined while the store is not open (before start, after stop): no samples then. */
  stats(queue: string): Promise<QueueStats & { readonly limited?: number; readonly collecting?: number }> | undefined;
  /** The store's engine and whether it takes writes now (its own failure state, no statement); undefined while it is not open. */
  storeUp?(): { readonly engine: string; readonly up: boolean } | undefined;
  /** Each task and whether it is paused now (the process's own state, no statement); empty while the app is not running. */
  tasksPaused?(): ReadonlyArray<readonly [task: string, paused: boolean]>;
}

/**
 * The app's Prometheus metrics (prom-client). Label values come from a bounded set: task
 * names, queue names, status codes, error codes, engine names; never a path or an id.
 */
export class MetricsObserver implements AppObserver {
  private readonly requests: KeyedCounter;
  private readonly requestDuration: KeyedHistogram;
  private readonly taskRuns: KeyedCounter;
  private readonly taskDuration: KeyedHistogram;
  private readonly storeWrites: KeyedHistogram;
  private readonly requestSeries = new Map<string, Map<string, Map<number, { value: number }>>>();
  private requestResets = 0;
  private readonly taskRunSeries = new Map<string, Map<string, { value: number }>>();
  private taskRunResets = 0;
  private snapshot: { at: number; stats: Promise<Array<[string, QueueStats & { readonly limited?: number; readonly collecting?: number }]>> } | undefined;

  constructor(
    readonly registry: Registry,
    private readonly queueStats: QueueStatsSource,
    options: { defaultMetrics?: boolean } = {},
  ) {
    if (registry.getSingleMetric("webhook_requests_total") !== undefined) {
      // prom-client's own error names the metric only: the usual cause is two apps on one registry.
      throw new Error(
        "metrics: this registry already holds an app's metrics (webhook_requests_total): two apps cannot share " +
          "one Registry, as their series would have the same names; leave out metrics.registry (each app then " +
          "has its own, served at its own metrics path or port) or give each app a Registry of its own",
      );
    }
    const registers = [registry];
    this.requests = new KeyedCounter("webhook_requests_total", "Webhook requests answered, by source, status and code (accepted, duplicate, or the refusal's error code).", registry);
    this.requestDuration = new KeyedHistogram("webhook_request_duration_seconds", "Time from a webhook request's routing to its answer, by source.", registry, "source", REQUEST_BUCKETS);
    this.taskRuns = new KeyedCounter("webhook_task_runs_total", "Task runs, by task and outcome (success, retry, dead_letter, timeout).", registry);
    this.taskDuration = new KeyedHistogram("webhook_task_duration_seconds", "Time a task's handler ran, by task.", registry, "task", TASK_BUCKETS);
    this.storeWrites = new KeyedHistogram("webhook_store_write_duration_seconds", "Time of the store's queue writes (enqueue, complete, retry, dead letter) until durable, by engine.", registry, "engine", STORE_BUCKETS);
    const gauge = (name: string, help: string, value: (stats: QueueStats, now: number) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ["queue"],
        registers,
        collect: async function (this: Gauge<"queue">) {
          this.reset();
          const now = Date.now();
          for (const [queue, stats] of await observer.queueSnapshot()) this.set({ queue }, value(stats, now));
        },
      });
    const observer = this;
    gauge("webhook_queue_depth", "Messages in the queue: waiting (retries included) and in flight.", (s) => s.waiting + s.inFlight);
    gauge("webhook_queue_oldest_age_seconds", "Age of the oldest message still in the queue; 0 when it is empty.", (s, now) => (s.oldestEnqueuedAt === undefined ? 0 : Math.max(0, (now - s.oldestEnqueuedAt) / 1000)));
    gauge("webhook_dead_letters", "Dead letters taken from the queue and kept.", (s) => s.deadLetters);
    new Gauge({
      name: "webhook_queue_messages",
      help: "Messages in the queue by state: ready (due, free to run), delayed (a retry's backoff or a delayed message), limited (held back by the task's concurrency or rate limit), collecting (in a debounce or batch not due yet), in_flight.",
      labelNames: ["queue", "state"],
      registers,
      collect: async function (this: Gauge<"queue" | "state">) {
        this.reset();
        for (const [queue, stats] of await observer.queueSnapshot()) {
          const delayed = stats.delayed ?? 0;
          const limited = stats.limited ?? 0;
          const collecting = stats.collecting ?? 0;
          this.set({ queue, state: "ready" }, Math.max(0, stats.waiting - delayed - limited - collecting));
          this.set({ queue, state: "delayed" }, delayed);
          this.set({ queue, state: "limited" }, limited);
          this.set({ queue, state: "collecting" }, collecting);
          this.set({ queue, state: "in_flight" }, stats.inFlight);
        }
      },
    });
    new Gauge({
      name: "webhook_store_up",
      help: "1 while the store takes writes, 0 while it cannot (a database out of reach, a failed disk): webhooks are then answered 503. No sample before start or after stop.",
      labelNames: ["engine"],
      registers,
      collect(this: Gauge<"engine">) {
        this.reset();
        const state = queueStats.storeUp?.();
        if (state !== undefined) this.set({ engine: state.engine }, state.up ? 1 : 0);
      },
    });
    new Gauge({
      name: "webhook_task_paused",
      help: "1 while the task is paused (app.pause, the console): its events are stored and none runs; 0 otherwise.",
      labelNames: ["task"],
      registers,
      collect(this: Gauge<"task">) {
        this.reset();
        for (const [task, paused] of queueStats.tasksPaused?.() ?? []) this.set({ task }, paused ? 1 : 0);
      },
    });
    // A registry given with the default metrics collected already (your own collectDefaultMetrics) keeps them as they are.
    if (options.defaultMetrics !== false && registry.getSingleMetric("process_cpu_user_seconds_total") === undefined) collectDefaultMetrics({ register: registry });
  }

  onRequest(outcome: RequestOutcome): void {
    const { source, status, code } = outcome;
    if (this.requests.resets !== this.requestResets) {
      this.requestSeries.clear();
      this.requestResets = this.requests.resets;
    }
    // Source, then code, then status: three lookups of strings and a number V8 has hashed
    // already, instead of building and hashing a key per request.
    let byCode = this.requestSeries.get(source);
    if (byCode === undefined) this.requestSeries.set(source, (byCode = new Map()));
    let byStatus = byCode.get(code);
    if (byStatus === undefined) byCode.set(code, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) byStatus.set(status, (series = this.requests.seriesOf(`${source}\u0000${status}\u0000${code}`, () => ({ source, status, code }))));
    series.value++;
    this.requestDuration.observe(source, outcome.durationSeconds);
  }

  onTaskRun(run: TaskRunOutcome): void {
    const { task, outcome } = run;
    if (this.taskRuns.resets !== this.taskRunResets) {
      this.taskRunSeries.clear();
      this.taskRunResets = this.taskRuns.resets;
    }
    // Task, then outcome, as for requests: no key string built and hashed per run.
    let byOutcome = this.taskRunSeries.get(task);
    if (byOutcome === undefined) this.taskRunSeries.set(task, (byOutcome = new Map()));
    let series = byOutcome.get(outcome);
    if (series === undefined) byOutcome.set(outcome, (series = this.taskRuns.seriesOf(`${task}\u0000${outcome}`, () => ({ task, outcome }))));
    series.value++;
    this.taskDuration.observe(task, run.durationSeconds);
  }

  onStoreWrite(write: StoreWrite): void {
    this.storeWrites.observe(write.engine, write.durationSeconds);
  }

  /** One read of the store's stats per scrape, shared by the three queue gauges. */
  private queueSnapshot(): Promise<Array<[string, QueueStats & { readonly limited?: number; readonly collecting?: number }]>> {
    const now = Date.now();
    if (this.snapshot !== undefined && now - this.snapshot.at < 250) return this.snapshot.stats;
    const reads: Array<Promise<[string, QueueStats] | undefined>> = this.queueStats.queues().map((queue) => {
      const read = this.queueStats.stats(queue);
      return read === undefined ? Promise.resolve(undefined) : read.then((stats): [string, QueueStats & { readonly limited?: number; readonly collecting?: number }] => [queue, stats], () => undefined);
    });
    const stats = Promise.all(reads).then((all) => all.filter((entry): entry is [string, QueueStats & { readonly limited?: number; readonly collecting?: number }] => entry !== undefined));
    this.snapshot = { at: now, stats };
    return stats;
  }
}
