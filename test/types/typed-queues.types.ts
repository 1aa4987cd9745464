/**
 * Compile-time checks of typed queues and method names: this file is part of the build, so
 * the suite fails when a line marked @ts-expect-error compiles (or when the rest does not).
 * Nothing here runs.
 */
import { CoreApp, Queue, Task, WebhookSource, WebhookResponse, type TaskContext, type WebhookEvent } from "webhook-tasks";

interface Total {
  order: string;
  total: number;
}

export const totals = new Queue<Total>("totals");
const hook = new WebhookSource({ path: "/orders", methods: ["POST", "put"], port: 0 });
const app = new CoreApp("types", { store: "memory" });

// The emitting task must return a Total (or nothing).
app.task({ source: hook, emit: totals }, async (ctx, event: WebhookEvent<{ id: string }>) => ({ order: event.body.id, total: 1 }));
app.task({ source: hook, emit: totals }, async () => undefined);
// @ts-expect-error a Total needs `total`
app.task({ source: hook, emit: totals }, async (ctx, event: WebhookEvent<{ id: string }>) => ({ order: event.body.id }));
// @ts-expect-error a string is not a Total
app.task({ source: hook, emit: totals }, () => "done");

// The consuming task receives a Total, without annotating it.
app.task({ source: totals }, async (ctx, total) => {
  const cents: number = total.total * 100;
  // @ts-expect-error a Total has no `body`: it is not a WebhookEvent
  total.body;
  return cents;
});
// @ts-expect-error the handler asks for a string, the queue carries Totals
app.task({ source: totals }, async (ctx: TaskContext, total: string) => total.length);

// A typed queue to a typed queue: the emitted type is checked too.
const cents = new Queue<number>("cents");
app.task({ source: totals, emit: cents }, async (ctx, total) => total.total * 100);
// @ts-expect-error a Total is not a number
app.task({ source: totals, emit: cents }, async (ctx, total) => total);

// Plain strings keep working, untyped: the handler says what it takes.
app.task({ source: hook, emit: "loose" }, async () => ({ anything: true }));
app.task({ source: "loose" }, async (ctx, value: { anything: boolean }) => value.anything);

// Decorators: the same checks on methods.
export class Handlers {
  @Task({ source: totals })
  async record(ctx: TaskContext, total: Total): Promise<void> {
    ctx.logger.info({ total: total.total }, "total");
  }

  @Task({ source: hook, emit: totals })
  async sum(ctx: TaskContext, event: WebhookEvent<{ id: string }>): Promise<Total> {
    return { order: event.body.id, total: 2 };
  }

  // @ts-expect-error the method returns a string to a queue of Totals
  @Task({ source: hook, emit: totals })
  async wrong(): Promise<string> {
    return "x";
  }

  // @ts-expect-error the method takes a number from a webhook source, whose tasks get WebhookEvents
  @Task({ source: hook, name: "notAnEvent" })
  async notAnEvent(ctx: TaskContext, n: number): Promise<void> {
    ctx.logger.info({ n }, "n");
  }

  @Task({ source: hook, name: "partOfAnEvent" })
  async partOfAnEvent(ctx: TaskContext, event: { body: { id: string }; name?: string }): Promise<string> {
    return event.body.id;
  }

  // @ts-expect-error the method takes a number from a queue of Totals
  @Task({ source: totals })
  async mismatched(ctx: TaskContext, n: number): Promise<void> {
    ctx.logger.info({ n }, "n");
  }
}

// HTTP method names are checked.
// @ts-expect-error "PSOT" is not an HTTP method
new WebhookSource({ path: "/typo", methods: ["PSOT"] });
// status_code is a number (its range is checked when constructed).
// @ts-expect-error a string is not a status code
new WebhookResponse({ status_code: "200" });
