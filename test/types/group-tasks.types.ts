/**
 * Compile-time checks of debounced and batched handlers: this file is part of the build, so
 * the suite fails when a line marked @ts-expect-error compiles (or when the rest does not).
 * Nothing here runs.
 */
import { CoreApp, Queue, Task, WebhookSource, type TaskContext, type WebhookEvent } from "webhook-tasks";

interface Change {
  product: string;
  price: number;
}

const changes = new Queue<Change>("changes");
const counts = new Queue<number>("counts");
const app = new CoreApp("group-types", { store: "memory" });

// A batched task takes an array of the queue's type, and its key reads one event.
app.task({ source: changes, emit: counts, batch: { maxSize: 100, maxWaitMs: 1000, key: (c) => c.product } }, async (ctx, events) => {
  const prices: number[] = events.map((c) => c.price);
  return prices.length;
});
// @ts-expect-error a batch's key takes one event: a Change has no `length`
app.task({ source: changes, batch: { maxSize: 100, maxWaitMs: 1000, key: (c) => c.length } }, async () => undefined);
// @ts-expect-error a batch of Changes is not a number
app.task({ source: changes, emit: counts, batch: { maxSize: 10, maxWaitMs: 100 } }, async (ctx, events) => events);

// @ts-expect-error a batched task's handler takes an array of Changes, not one
app.task({ source: changes, batch: { maxSize: 10, maxWaitMs: 100 } }, async (ctx, change: Change) => change.price);

// A debounced task takes the newest event, and ctx.batch holds them all, typed.
app.task({ source: changes, debounce: { periodMs: 500, key: (c) => c.product } }, async (ctx, latest) => {
  const price: number = latest.price;
  const all: readonly Change[] = ctx.batch;
  // @ts-expect-error ctx.batch holds Changes, not strings
  const wrong: readonly string[] = ctx.batch;
  return price + all.length + wrong.length;
});

// A ctx annotated as a plain TaskContext does not make the event unknown.
app.task({ source: changes }, async (ctx: TaskContext, change) => change.price);
app.task({ source: changes, batch: { maxSize: 10, maxWaitMs: 100 } }, async (ctx: TaskContext, events) => events.map((c) => c.price));

// @Task with a batch: the method takes an array.
export class Handlers {
  @Task({ source: changes, batch: { maxSize: 10, maxWaitMs: 100 } })
  async prices(ctx: TaskContext, events: Change[]): Promise<number> {
    return events.length;
  }

  // @ts-expect-error a batched method takes an array of Changes, not one
  @Task({ source: changes, batch: { maxSize: 10, maxWaitMs: 100 } })
  async one(ctx: TaskContext, event: Change): Promise<number> {
    return event.price;
  }
}

// @Task with a debounce: ctx may be typed by the queue, and ctx.batch then holds its values.
export class DebouncedHandlers {
  @Task({ source: changes, debounce: { periodMs: 500, key: (c) => c.product } })
  async latest(ctx: TaskContext<Change>, latest: Change): Promise<number> {
    const first: Change | undefined = ctx.batch[0];
    return (first?.price ?? 0) + latest.price;
  }

  // @ts-expect-error ctx.batch holds Changes, not numbers
  @Task({ source: changes, debounce: { periodMs: 500, key: (c) => c.product } })
  async wrongContext(ctx: TaskContext<number>, latest: Change): Promise<number> {
    return latest.price + ctx.batch.length;
  }

  // A batched method's ctx holds the batch's values.
  @Task({ source: changes, batch: { maxSize: 10, maxWaitMs: 100 } })
  async batchContext(ctx: TaskContext<Change>, events: Change[]): Promise<number> {
    return ctx.batch.length + events.length;
  }
}

// A queue named by a plain string has untyped values: the handler says what it takes.
app.task({ source: "totals" }, async (ctx, value) => {
  // @ts-expect-error a plain string's queue gives `unknown`, not a webhook event
  value.headers;
  return undefined;
});
app.task({ source: "totals" }, async (ctx, value: { total: number }) => value.total);

// A source that may be either (a helper's parameter) is taken too, its values untyped.
export function addAudit(source: WebhookSource | string): void {
  app.task({ source, name: `audit-${typeof source === "string" ? source : source.options.path}` }, async (ctx, value) => {
    // @ts-expect-error the value of a source that may be a queue is `unknown`
    value.headers;
    return undefined;
  });
}

// @Task on a webhook source without `on`: ctx holds webhook events, whatever their body.
const plainHook = new WebhookSource({ path: "/plain", port: 0 });
export class PlainHookHandlers {
  @Task({ source: plainHook, debounce: { periodMs: 100 } })
  async typedBody(ctx: TaskContext<WebhookEvent<{ id: string }>>, event: WebhookEvent<{ id: string }>): Promise<string> {
    return (ctx.batch[0]?.body.id ?? "") + event.body.id;
  }

  @Task({ source: plainHook, name: "plain-batched", batch: { maxSize: 10, maxWaitMs: 100 } })
  async batched(ctx: TaskContext, events: WebhookEvent<{ id: string }>[]): Promise<number> {
    return events.length;
  }

  // @ts-expect-error a batched method takes an array of webhook events, not one
  @Task({ source: plainHook, name: "plain-batched-one", batch: { maxSize: 10, maxWaitMs: 100 } })
  async batchedOne(ctx: TaskContext, event: WebhookEvent<{ id: string }>): Promise<string> {
    return event.body.id;
  }

  @Task({ source: plainHook, name: "plain-untyped" })
  async untyped(ctx: TaskContext, event: WebhookEvent): Promise<number> {
    return ctx.batch.length + (event.method === "POST" ? 1 : 0);
  }

  // @ts-expect-error a webhook source's ctx holds webhook events, not numbers
  @Task({ source: plainHook, name: "plain-wrong" })
  async wrongContext(ctx: TaskContext<number>, event: WebhookEvent): Promise<number> {
    return ctx.batch.length + (event.method === "POST" ? 1 : 0);
  }
}

// ctx.emit by name takes any value but undefined, unknown included.
app.task({ source: "emitting" }, async (ctx, value) => {
  ctx.emit("somewhere", value);
  ctx.emit("somewhere", { n: 1 });
  ctx.emit("somewhere", null);
  // @ts-expect-error undefined is refused (it would throw at run time)
  ctx.emit("somewhere", undefined);
  return undefined;
});
