import { BearerAuth, CoreApp, WebhookSource, type TaskContext, type WebhookEvent } from "webhook-tasks";

interface Order {
  id: string;
  lines: Array<{ sku: string; qty: number; price: number }>;
}

export const ordersHook = new WebhookSource({
  path: "/hooks/orders",
  methods: ["POST", "PUT"],
  port: Number(process.env.PORT ?? 8080),
  auth: new BearerAuth(process.env.ORDERS_TOKEN!),
});

export const app = new CoreApp("orders");

// Every accepted request is one event; the return value goes to the "totals" queue.
app.task({ source: ordersHook, emit: "totals" }, async function totalOrder(ctx: TaskContext, event: WebhookEvent<Order>) {
  const total = event.body.lines.reduce((sum, line) => sum + line.qty * line.price, 0);
  return { order: event.body.id, total, receivedAt: event.received_at };
});

// A second task consumes that queue.
app.task({ source: "totals" }, async function recordTotal(ctx: TaskContext, result: { order: string; total: number }) {
  await ctx.state.set(`total:${result.order}`, result.total);
  ctx.logger.info(result, "order total");
});

if (require.main === module) void app.run(); // Ctrl-C or SIGTERM: graceful stop
