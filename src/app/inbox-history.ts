import type { RoutedEvent } from "../sources/source";
import type { DeliveryNote, EventNote, EventOrigin, HistoryStore } from "../store/history";
import type { QueuedMessage } from "../store/store";
import type { Logger } from "../util/logger";
import { redactSecretHeaders } from "../util/redact-headers";
import type { ParserMode } from "../sources/webhook/webhook-event";
import { modeFor } from "../sources/webhook/parse-body";
import type { Subscriber } from "./fan-out";
import { traceIdOf } from "./run-history";

/**
 * What a source's inbox tells the history once an event is stored: one note with the copy each
 * task got. Made after the write landed, never awaited: the answer to the sender does not wait.
 */
export class InboxHistory {
  private readonly taskOfQueue: ReadonlyMap<string, string>;
  /** One for all its notes: an engine keeps it as it is, and hands readers copies. */
  private readonly origin: EventOrigin;

  constructor(
    private readonly history: HistoryStore,
    /** The source's label. */
    private readonly source: string,
    subscribers: readonly Subscriber[],
    private readonly logger: Logger,
    /** The source's body parser, for a webhook source: whether the `auto` parser reads its bodies back alike. */
    private readonly bodyParser: ParserMode | undefined = undefined,
  ) {
    this.taskOfQueue = new Map(subscribers.map((s) => [s.queue, s.name]));
    this.origin = Object.freeze({ kind: "webhook", source });
  }

  /** Never throws (it runs in a promise callback nobody awaits): a failure is logged. */
  accepted(routed: RoutedEvent): void {
    try {
      this.note(routed);
    } catch (error) {
      this.logger.error({ eventId: routed.id, err: error }, "cannot note an event in the event history");
    }
  }

  /** An event no task took: noted with no deliveries (unrouted). Never throws: a failure is logged. */
  unrouted(message: QueuedMessage): void {
    try {
      this.noteMessage(message.id, message, []);
    } catch (error) {
      this.logger.error({ eventId: message.id, err: error }, "cannot note an unrouted event in the event history");
    }
  }

  /** Whether the source parsed this event's body as the `auto` parser does (the history reads bodies back that way). */
  private parsedAsAuto(payload: unknown): boolean {
    const parser = this.bodyParser;
    if (parser === undefined) return false;
    if (parser === "auto") return true;
    const headers = typeof payload === "object" && payload !== null ? (payload as { headers?: unknown }).headers : undefined;
    const contentType = typeof headers === "object" && headers !== null ? (headers as Record<string, unknown>)["content-type"] : undefined;
    return modeFor(typeof contentType === "string" ? contentType : undefined) === parser;
  }

  private note(routed: RoutedEvent): void {
    const { copies } = routed;
    const first = copies[0]?.message;
    if (first === undefined) return;
    const deliveries: DeliveryNote[] = [];
    for (const { queue, message } of copies) deliveries.push({ task: this.taskOfQueue.get(queue) ?? queue, queue, messageId: message.id });
    this.noteMessage(routed.id, first, deliveries);
  }

  private noteMessage(id: string, first: QueuedMessage, deliveries: readonly DeliveryNote[]): void {
    // Credentials and signatures are not history: the stored event keeps them for its runs only.
    const payload = redactSecretHeaders(first.payload);
    const name = eventName(payload);
    const traceId = traceIdOf(first.traceContext);
    const note: { -readonly [K in keyof EventNote]: EventNote[K] } = { id, origin: this.origin, receivedAt: first.enqueuedAt, deliveries, payload };
    if (first.raw !== undefined) {
      note.raw = first.raw;
      if (first.bodyFromRaw === true && this.parsedAsAuto(payload)) note.bodyFromRaw = true;
    }
    if (name !== undefined) note.name = name;
    if (traceId !== undefined) note.traceId = traceId;
    this.history.noteEvent(note);
  }
}

function eventName(payload: unknown): string | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const name = (payload as { name?: unknown }).name;
  return typeof name === "string" ? name : undefined;
}
