import type { WebhookEvent } from "../webhook-event";

/**
 * Names an event from what the sender put in it (a header, a body field), or gives undefined
 * when the delivery carries no name. Runs at ingest, before the event is stored.
 */
export type EventNamer = (event: WebhookEvent) => string | undefined;
