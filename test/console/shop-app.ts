import { CoreApp, GitHubSignature, PermanentError, Queue, silentLogger, WebhookSource, type CoreAppOptions, type WebhookEvent } from "../../src/index";
import { signRequest } from "../../src/testing/index";
import type { ConsoleOptions } from "../../src/console/console-options";

export const GITHUB_SECRET = "github-secret-of-the-console-tests";
export const CONSOLE_TOKEN = "console-token-0123456789abcdef";

interface Order {
  readonly order: string;
  readonly fail?: boolean;
  readonly note?: string;
}

/** A small shop: GitHub-signed orders feed `billing`, which emits receipts to `mailer`; a body without an order is unrouted. */
export interface ShopApp {
  readonly app: CoreApp;
  readonly github: WebhookSource;
  /** `billing` refuses orders with `fail: true` (a dead letter at once) until this is set. */
  fixed: boolean;
  /** `billing` takes only bodies with an order until this is set. */
  takesAll: boolean;
  /** The console's URL (with its path and a trailing slash). */
  readonly consoleUrl: string;
  /** Sends one signed delivery; resolves with the 202's event id. */
  deliver(order: Order, headers?: Record<string, string>, query?: Record<string, string>): Promise<string>;
  /** Sends one signed delivery of any body; resolves with the answer's status and JSON. */
  send(body: unknown): Promise<{ status: number; json: unknown }>;
  stop(): Promise<void>;
}

/** `more`: adds tasks of its own before the app starts (a task with a very long name). */
export async function startShop(
  consoleOption: boolean | ConsoleOptions = { port: 0, auth: { token: CONSOLE_TOKEN } },
  options: CoreAppOptions = {},
  more?: (app: CoreApp, github: WebhookSource) => void,
): Promise<ShopApp> {
  const github = new WebhookSource({ path: "/hooks/github", host: "127.0.0.1", port: 0, auth: new GitHubSignature(GITHUB_SECRET) });
  const receipts = new Queue<{ order: string }>("receipts");
  const app = new CoreApp("shop", { store: "memory", logger: silentLogger, console: consoleOption, ...options });
  const shop = { fixed: false, takesAll: false } as { fixed: boolean; takesAll: boolean };
  const hasOrder = (event: WebhookEvent): boolean => shop.takesAll || typeof (event.body as Partial<Order> | null)?.order === "string";
  app.task({ source: github, name: "billing", emit: receipts, retry: { attempts: 1 }, filter: hasOrder }, async (_ctx, event: WebhookEvent<Order>) => {
    if (event.body.fail === true && !shop.fixed) throw new PermanentError(`card declined for order ${event.body.order}`);
    return { order: event.body.order };
  });
  app.task({ source: receipts, name: "mailer" }, async (_ctx, receipt) => `mailed ${receipt.order}`);
  more?.(app, github);
  await app.start();
  const send = async (value: unknown): Promise<{ status: number; json: unknown }> => {
    const body = JSON.stringify(value);
    const res = await fetch(github.url, { method: "POST", headers: { "content-type": "application/json", "x-github-event": "push", ...signRequest("github", { secret: GITHUB_SECRET, body }) }, body });
    return { status: res.status, json: (await res.json()) as unknown };
  };
  const deliver = async (order: Order, headers: Record<string, string> = {}, query: Record<string, string> = {}): Promise<string> => {
    const body = JSON.stringify(order);
    const search = new URLSearchParams(query).toString();
    const res = await fetch(search === "" ? github.url : `${github.url}?${search}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "push", ...signRequest("github", { secret: GITHUB_SECRET, body }), ...headers },
      body,
    });
    const answer = (await res.json()) as { id?: string };
    if (res.status !== 202 || typeof answer.id !== "string") throw new Error(`the delivery was answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer.id;
  };
  return Object.assign(shop, {
    app,
    github,
    consoleUrl: app.consoleUrl ?? "",
    deliver,
    send,
    stop: () => app.stop({ timeoutMs: 2_000 }),
  });
}

/** Polls `check` until it returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 5_000, what = "the condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
