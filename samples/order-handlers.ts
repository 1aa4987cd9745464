import { Task, type TaskContext, type WebhookEvent } from "webhook-tasks";
import { ordersHook } from "./sources";

const ONE_WEEK_MS = 7 * 24 * 3600 * 1000;

/** Senders deliver at least once: remember each x-event-id for a week and skip repeats. */
export class OrderHandlers {
  @Task({ source: ordersHook, emit: "orders" })
  async receiveOrder(ctx: TaskContext, event: WebhookEvent<{ id?: string; total?: number }>) {
    // The sender's own id of the delivery (the same on its retries); ctx.eventId is ours.
    const deliveryId = event.headers["x-event-id"] ?? ctx.eventId;
    const marker = `processed:${deliveryId}`;
    // Atomic: of two copies arriving together, exactly one gets true.
    if (!(await ctx.state.setIfAbsent(marker, true, { ttlMs: ONE_WEEK_MS }))) return { duplicate: true, deliveryId };
    try {
      // ... do the real work here ...
    } catch (error) {
      await ctx.state.delete(marker); // not processed after all: let the retry in
      throw error;
    }
    return { duplicate: false, deliveryId, order: event.body.id, total: event.body.total };
  }

  @Task({ source: "orders" })
  async logOrder(ctx: TaskContext, result: { duplicate: boolean; deliveryId: string }) {
    ctx.logger.info({ deliveryId: result.deliveryId }, result.duplicate ? "duplicate delivery dropped" : "order processed");
  }
}
