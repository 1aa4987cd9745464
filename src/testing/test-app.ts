import { randomUUID } from "node:crypto";
import type { CoreApp } from "../app/core-app";
import { isQueue, type Queue } from "../app/queue";
import type { DeliveryOutcome, Source } from "../sources/source";
import type { WebhookEvent } from "../sources/webhook/webhook-event";
import { WebhookSource } from "../sources/webhook/webhook-source";
import type { StoreSpec } from "../store/create-store";
import { emitList, type EmitRecord, type QueuedMessage, type Store } from "../store/store";
import { storedForm } from "../store/payload-codec";
import { testStore } from "./test-store";

export interface TestAppOptions {
  /**
   * The store for the test run (default "memory": nothing on disk, nothing left behind).
   * "embedded" is a fresh temporary directory, removed by `stop()`, never the app's own.
   */
  store?: StoreSpec;
  /** How long `send` and `push` wait for the task (default 5 s). */
  timeoutMs?: number;
}

export interface SendInit {
  /** A string or Buffer is sent as is; anything else as JSON (with content-type application/json). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Default: the source's first method. */
  method?: string;
  /** Appended to the source's path. */
  query?: Record<string, string>;
}

/** One task run, from the request (or the pushed value) to the task's outcome. */
export interface TestRun<E = unknown, R = unknown> {
  /** The HTTP answer (`send` only; 0 for `push`). */
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The answer's body: parsed JSON, else text. */
  readonly body: unknown;
  /** What the task received; undefined when the request made no event (refused, duplicate). */
  readonly event: E | undefined;
  /** What the task returned on its first attempt (undefined when it threw). */
  readonly result: R | undefined;
  /** What went to the task's `emit` queue (undefined when nothing did). */
  readonly emitted: R | undefined;
  /** What the task threw on its first attempt (it is then retried as usual). */
  readonly error: unknown;
}

/** A request and what became of it at each task its source feeds. */
export interface TestDelivery<E = unknown> {
  /** The HTTP answer. */
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The answer's body: parsed JSON, else text. */
  readonly body: unknown;
  /** One run per task that took the event (its filter said yes), by task name; empty when none did. */
  readonly runs: Readonly<Record<string, TestRun<E>>>;
}

/** A started app in a test: send it requests, push to its queues, await the tasks. */
export interface TestApp {
  readonly app: CoreApp;
  /**
   * Sends a request to `source` over HTTP (real socket), then awaits its task's first attempt.
   * For a source feeding several tasks: the run of the first task (in the order they were
   * added) that took the event; `deliver` gives every one.
   */
  send<B = unknown>(source: WebhookSource, init?: SendInit): Promise<TestRun<WebhookEvent<B>>>;
  /** Sends a request to `source` as `send` does, then awaits the first attempt of every task that took the event. */
  deliver<B = unknown>(source: WebhookSource, init?: SendInit): Promise<TestDelivery<WebhookEvent<B>>>;
  /**
   * Puts `value` on a queue, as an emitting task would (to every consumer whose filter takes it),
   * then awaits the first consuming task's first attempt.
   */
  push<T>(queue: Queue<T> | string, value: T): Promise<TestRun<T>>;
  /**
   * Waits until no queue of the app's tasks holds a message (waiting, running, or due to be
   * retried): every value emitted down a chain of tasks has run, to its end or to a dead letter.
   * Rejects after `timeoutMs`, naming the queues that still hold messages.
   */
  drain(): Promise<void>;
  /** Stops the app (and its store). */
  stop(): Promise<void>;
}

/**
 * Starts `app` for a test: a memory store (unless told otherwise), every listener on a free
 * port, and hooks that report what each task received, returned and emitted.
 *
 *   const t = await testApp(app);
 *   const run = await t.send(githubHook, { body: push, headers: signRequest("github", { secret, body }) });
 *   expect(run.emitted).to.deep.equal({ ... });
 *   await t.stop();
 */
export async function testApp(app: CoreApp, options: TestAppOptions = {}): Promise<TestApp> {
  // A JavaScript test (or a cast) may pass anything: said here, not as a property read of undefined.
  if (typeof (app as Partial<CoreApp> | null | undefined)?.configureForTest !== "function") {
    throw new TypeError(`testApp: the first argument must be a CoreApp, got ${app === null ? "null" : typeof app}`);
  }
  const timeoutMs = options.timeoutMs ?? 5_000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new TypeError(`testApp: timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  const { store, cleanUp } = testStore(options.store ?? "memory", app.name);
  const watcher = new RunWatcher();
  try {
    app.configureForTest({ store: watcher.wrap(store), freePorts: true });
  } catch (error) {
    cleanUp();
    if (!(error instanceof Error && error.message.endsWith("configureForTest() must come before start()"))) throw error;
    throw new Error(`testApp: app "${app.name}" was started already (by an earlier testApp or app.start()); an app starts once, so build a fresh app for each test`);
  }
  const unobserve = app.onOutcome((id, outcome) => watcher.settled(id, outcome));
  try {
    await app.start();
  } catch (error) {
    cleanUp();
    throw error;
  }
  let stopped = false;
  /** After stop() the listeners and the store are gone: say so, rather than "fetch failed". */
  const running = (method: string): void => {
    if (stopped) throw new Error(`testApp.${method}: app "${app.name}" was stopped (t.stop()); start a fresh app with testApp`);
  };
  // One request per queue at a time: the message a request adds is then the one after the count taken before it.
  const busy = new Map<string, Promise<unknown>>();
  const serial = <T>(queue: string, work: () => Promise<T>): Promise<T> => {
    const result = (busy.get(queue) ?? Promise.resolve()).then(work, work);
    busy.set(queue, result.catch(() => undefined));
    return result;
  };

  const subscribersOf = (source: Source): Array<{ name: string; queue: string }> => {
    const tasks = app.tasks.filter((t) => t.source === source);
    if (tasks.length === 0) throw new Error(`testApp: ${source.describe()} feeds no task of app "${app.name}"`);
    return tasks;
  };
  const noRun = { event: undefined, result: undefined, emitted: undefined, error: undefined };
  /** The run of event `id` by `task`; past the timeout, a paused task is named as the reason. */
  const runOf = async <E>(task: string | undefined, id: string): Promise<Pick<TestRun<E>, "event" | "result" | "emitted" | "error">> => {
    try {
      return await watcher.run<E>(id, timeoutMs);
    } catch (error) {
      if (task !== undefined && error instanceof RunTimeout && (await app.paused()).includes(task)) {
        throw new RunTimeout(`testApp: task "${task}" is paused, so it did not run event ${id} within ${timeoutMs} ms; app.resume("${task}") lets it run`);
      }
      throw error;
    }
  };

  const deliver = async <B>(source: WebhookSource, init: SendInit, method: string): Promise<TestDelivery<WebhookEvent<B>>> => {
    running(method);
    if (!(source instanceof WebhookSource)) throw new TypeError(`testApp.${method}: the first argument must be a WebhookSource of the app`);
    const tasks = subscribersOf(source);
    return serial(tasks[0].queue, async () => {
        const before = tasks.map((t) => watcher.count(t.queue));
        const headers: Record<string, string> = { ...init.headers };
        let body: string | Buffer | undefined;
        if (init.body === undefined || typeof init.body === "string" || Buffer.isBuffer(init.body)) body = init.body;
        else {
          body = JSON.stringify(init.body);
          if (!Object.keys(headers).some((k) => k.toLowerCase() === "content-type")) headers["content-type"] = "application/json";
        }
        const query = init.query ? `?${new URLSearchParams(init.query).toString()}` : "";
        const res = await fetch(source.url + query, { method: init.method ?? source.options.methods[0], headers, body });
        const text = await res.text();
        const answer = { status: res.status, headers: Object.fromEntries(res.headers), body: parseAnswer(text) };
        const runs: Record<string, TestRun<WebhookEvent<B>>> = {};
        for (const [i, task] of tasks.entries()) {
          const id = watcher.idAfter(task.queue, before[i]);
          // Defined, not assigned: a task named "__proto__" is a run too, not the object's prototype.
          if (id !== undefined) Object.defineProperty(runs, task.name, { value: { ...answer, ...(await runOf<WebhookEvent<B>>(task.name, id)) }, enumerable: true, writable: true, configurable: true });
        }
        return { ...answer, runs };
    });
  };

  return {
    app,
    async send<B>(source: WebhookSource, init: SendInit = {}): Promise<TestRun<WebhookEvent<B>>> {
      const delivery = await deliver<B>(source, init, "send");
      // In the order the tasks were added: an object lists names like "2024" first.
      const first = subscribersOf(source)
        .map((t) => Object.getOwnPropertyDescriptor(delivery.runs, t.name)?.value as TestRun<WebhookEvent<B>> | undefined)
        .find((run) => run !== undefined);
      return first ?? { status: delivery.status, headers: delivery.headers, body: delivery.body, ...noRun };
    },

    deliver<B>(source: WebhookSource, init: SendInit = {}): Promise<TestDelivery<WebhookEvent<B>>> {
      return deliver<B>(source, init, "deliver");
    },

    async push<T>(target: Queue<T> | string, value: T): Promise<TestRun<T>> {
      running("push");
      const queue = isQueue(target) ? target.name : target;
      if (!app.tasks.some((t) => t.input === queue)) throw new Error(`testApp.push: no task of app "${app.name}" consumes queue "${queue}"`);
      return serial(queue, async () => {
        const id = `test-${randomUUID()}`;
        // As the runner emits: the value in the form every engine gives back, one copy per consumer
        // its filter lets through, with that consumer's ordering key (a value, a filter or a key
        // function that fails rejects, as it fails an emitter).
        const payload = storedForm(value, "value");
        const copies = app.copiesFor(queue, { id, payload, attempts: 0, enqueuedAt: Date.now() });
        if (copies.length === 0) return { status: 0, headers: {}, body: undefined, ...noRun };
        await app.store.enqueueAll(copies, { internal: true });
        const task = app.tasks.find((t) => t.queue === copies[0].queue)?.name;
        return { status: 0, headers: {}, body: undefined, ...(await runOf<T>(task, copies[0].message.id)) };
      });
    },

    async drain() {
      running("drain");
      const queues = [...new Set(app.tasks.map((t) => t.queue))];
      const end = Date.now() + timeoutMs;
      for (;;) {
        const depths = await Promise.all(queues.map(async (queue) => [queue, await app.store.depth(queue)] as const));
        const holding = depths.filter(([, depth]) => depth > 0);
        if (holding.length === 0) return;
        if (Date.now() >= end) {
          const paused = new Set(await app.paused());
          const about = holding.map(([queue, depth]) => {
            const task = app.tasks.find((t) => t.queue === queue)?.name;
            return `${queue}: ${depth}${task !== undefined && paused.has(task) ? ` (task "${task}" is paused)` : ""}`;
          });
          throw new RunTimeout(`testApp.drain: queues still hold messages after ${timeoutMs} ms: ${about.join(", ")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
      }
    },

    async stop() {
      stopped = true;
      unobserve();
      try {
        await app.stop();
      } finally {
        cleanUp();
      }
    },
  };
}

interface Seen {
  event?: unknown;
  emitted?: unknown;
  outcome?: DeliveryOutcome;
  waiters: Array<() => void>;
}

/** Follows messages through a store: which were enqueued where, what they emitted, how they ended. */
class RunWatcher {
  private readonly byQueue = new Map<string, string[]>();
  private readonly seen = new Map<string, Seen>();

  wrap(store: Store): Store {
    const enqueue = (queue: string, message: QueuedMessage, options?: { internal?: boolean }) => {
      this.arrived(queue, message);
      return store.enqueue(queue, message, options);
    };
    const enqueueAll = (copies: readonly EmitRecord[], options?: { internal?: boolean }) => {
      for (const { queue, message } of copies) this.arrived(queue, message);
      return store.enqueueAll(copies, options);
    };
    const complete = (queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]) => {
      this.completing(id, emit);
      return store.complete(queue, id, emit);
    };
    // The runner completes through completeNow where the store has it: watched the same way.
    const completeNow =
      store.completeNow === undefined
        ? undefined
        : (queue: string, id: string, emit?: EmitRecord | readonly EmitRecord[]) => {
            this.completing(id, emit);
            store.completeNow!(queue, id, emit);
          };
    return new Proxy(store, {
      get(target, key) {
        if (key === "enqueue") return enqueue;
        if (key === "complete") return complete;
        if (key === "completeNow") return completeNow;
        if (key === "enqueueAll") return enqueueAll;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** Every copy carries the same value: the first says what was emitted. */
  private completing(id: string, emit: EmitRecord | readonly EmitRecord[] | undefined): void {
    const first = emitList(emit)[0];
    if (first !== undefined) this.entry(id).emitted = first.message.payload;
  }

  private arrived(queue: string, message: QueuedMessage): void {
    this.entry(message.id).event = message.payload;
    const ids = this.byQueue.get(queue) ?? [];
    ids.push(message.id);
    this.byQueue.set(queue, ids);
  }

  count(queue: string): number {
    return this.byQueue.get(queue)?.length ?? 0;
  }

  idAfter(queue: string, before: number): string | undefined {
    return this.byQueue.get(queue)?.[before];
  }

  settled(id: string, outcome: DeliveryOutcome): void {
    const entry = this.entry(id);
    if (entry.outcome !== undefined) return; // the first attempt is the one reported
    entry.outcome = outcome;
    for (const wake of entry.waiters.splice(0)) wake();
  }

  async run<E>(id: string, timeoutMs: number): Promise<Pick<TestRun<E>, "event" | "result" | "emitted" | "error">> {
    const entry = this.entry(id);
    if (entry.outcome === undefined) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve, reject) => {
        entry.waiters.push(resolve);
        timer = setTimeout(() => reject(new RunTimeout(`testApp: the task did not finish event ${id} within ${timeoutMs} ms`)), timeoutMs);
      }).finally(() => clearTimeout(timer));
    }
    const outcome = entry.outcome!;
    return {
      event: entry.event as E,
      result: outcome.ok ? outcome.value : undefined,
      emitted: entry.emitted,
      error: outcome.ok ? undefined : "error" in outcome ? outcome.error : new Error("timed out"),
    } as Pick<TestRun<E>, "event" | "result" | "emitted" | "error">;
  }

  private entry(id: string): Seen {
    let entry = this.seen.get(id);
    if (!entry) this.seen.set(id, (entry = { waiters: [] }));
    return entry;
  }
}

function parseAnswer(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** How often drain() looks at the queues. */
const DRAIN_POLL_MS = 5;

/** A run that did not finish within the test app's timeout. */
class RunTimeout extends Error {
  override name = "RunTimeout";
}
