import { Task, type TaskContext, type WebhookEvent } from "webhook-tasks";
import { ordersHook } from "./sources";

const ONE_WEEK_MS = 7 * 24 * 3600 * 1000;

/** Senders deliver at least once: remember each x-event-id for a week and skip repeats. */
export class OrderHandlers {
  @Task({ source: ordersHook, emit: "orders" })
  async receiveOrder(ctx: TaskContext, event: WebhookEvent<{ id?: string; total?: number }>) {
    const eventId = event.headers["x-event-id"] ?? ctx.eventId;
    const marker = `processed:${eventId}`;
    // Atomic: of two copies arriving together, exactly one gets true.
    if (!(await ctx.state.setIfAbsent(marker, true, { ttlMs: ONE_WEEK_MS }))) return { duplicate: true, eventId };
    try {
      // ... do the real work here ...
    } catch (error) {
      await ctx.state.delete(marker); // not processed after all: let the retry in
      throw error;
    }
    return { duplicate: false, eventId, order: event.body.id, total: event.body.total };
  }

  @Task({ source: "orders" })
  async logOrder(ctx: TaskContext, result: { duplicate: boolean; eventId: string }) {
    ctx.logger.info({ eventId: result.eventId }, result.duplicate ? "duplicate delivery dropped" : "order processed");
  }
}
