import { CoreApp, silentLogger, WebhookSource, type CoreAppOptions, type TaskContext, type WebhookEvent, type WebhookSourceOptions } from "../../src/index";

/**
 * Apps made through the returned function are stopped after each test of the calling
 * `describe` block, whatever the test did.
 */
export function useApps(): (name?: string, options?: CoreAppOptions) => CoreApp {
  const apps: CoreApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.stop({ timeoutMs: 2_000 })));
  });
  let count = 0;
  return (name = `test-${++count}`, options: CoreAppOptions = {}) => {
    const app = new CoreApp(name, { store: "memory", logger: silentLogger, ...options });
    apps.push(app);
    return app;
  };
}

/** A WebhookSource on a free loopback port; `path` defaults to "/hook". */
export function webhook(options: Partial<WebhookSourceOptions> = {}): WebhookSource {
  return new WebhookSource({ path: "/hook", host: "127.0.0.1", port: 0, ...options });
}

export interface Received<E> {
  readonly ctx: TaskContext;
  readonly event: E;
}

/**
 * Records what a task receives. `handler` is the task function; `reply` (optional) computes
 * its return value or throws.
 */
export class Collector<E = WebhookEvent> {
  readonly received: Array<Received<E>> = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  constructor(private readonly reply?: (ctx: TaskContext, event: E) => unknown) {}

  readonly handler = async (ctx: TaskContext, event: E): Promise<unknown> => {
    this.received.push({ ctx, event });
    this.waiters = this.waiters.filter((w) => {
      if (this.received.length < w.count) return true;
      w.resolve();
      return false;
    });
    return this.reply?.(ctx, event);
  };

  get events(): E[] {
    return this.received.map((r) => r.event);
  }

  get count(): number {
    return this.received.length;
  }

  /** Resolves once `count` calls have been made; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 3_000): Promise<Array<Received<E>>> {
    if (this.received.length >= count) return Promise.resolve(this.received);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`expected ${count} task call(s) within ${timeoutMs} ms, got ${this.received.length}`)),
        timeoutMs,
      );
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.received);
        },
      });
    });
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise with its resolve function, to hold a task until the test lets it go. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Starts an app with one webhook task and returns the pieces a test needs. */
export async function startWebhook(
  makeApp: (name?: string, options?: CoreAppOptions) => CoreApp,
  sourceOptions: Partial<WebhookSourceOptions> = {},
  extra: { app?: CoreAppOptions; reply?: (ctx: TaskContext, event: WebhookEvent) => unknown; retry?: { attempts?: number; initialDelayMs?: number } } = {},
): Promise<{ app: CoreApp; source: WebhookSource; events: Collector<WebhookEvent> }> {
  const app = makeApp(undefined, extra.app);
  const source = webhook(sourceOptions);
  const events = new Collector<WebhookEvent>(extra.reply);
  app.task({ source, name: "receive", retry: extra.retry }, events.handler);
  await app.start();
  return { app, source, events };
}
