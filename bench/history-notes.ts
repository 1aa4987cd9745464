import type { EventNote, RunNote } from "../src/store/history";
import { emittedId } from "../src/app/task-runner";
import { newEventId } from "../src/util/event-id";
import { jsonBody, SMALL_BODY_BYTES } from "./payload";

/** What the history micro-benches feed: any engine's history. */
export interface NoteSink {
  noteEvent(note: EventNote): void;
  noteRun(note: RunNote): void;
}

const text = jsonBody(SMALL_BODY_BYTES);

/**
 * One request of the bench's main case, as the app notes it: a 312-byte webhook's event and
 * its run, which emits a value, and the emitted value's event and run (two events, two runs).
 */
export function noteMainShape(history: NoteSink): void {
  const now = Date.now();
  // The app's ids: time-ordered for a webhook's event, derived from it for an emitted one.
  const id = newEventId(now);
  const payload = {
    body: JSON.parse(text) as unknown,
    headers: { host: "127.0.0.1:41234", "content-type": "application/json", "content-length": String(SMALL_BODY_BYTES) },
    query: {},
    method: "POST",
    path: "/hook0",
    client: "127.0.0.1",
    received_at: now / 1000,
  };
  history.noteEvent({ id, origin: { kind: "webhook", source: "hook0" }, receivedAt: now, deliveries: [{ task: "hook0", queue: "webhook:hook0", messageId: id }], payload, raw: Buffer.from(text), bodyFromRaw: true });
  const child = emittedId(id, "hook0");
  history.noteRun({ eventId: id, run: { task: "hook0", attempt: 1, startedAt: now, durationMs: 0.123, outcome: "success", emitted: [child] }, status: "succeeded" });
  history.noteEvent({ id: child, origin: { kind: "queue", queue: "next0" }, receivedAt: now + 1, deliveries: [{ task: "next0", queue: "next0", messageId: child }], payload: { path: "/hook0", at: now / 1000 }, parentId: id });
  history.noteRun({ eventId: child, run: { task: "next0", attempt: 1, startedAt: now + 1, durationMs: 0.05, outcome: "success" }, status: "succeeded" });
}

const TICK_MS = 10;

/** Feeds `rate` requests a second for `ms`, a tick's worth every 10 ms; returns how many. */
export async function feedMainShape(history: NoteSink, rate: number, ms: number): Promise<number> {
  const perTick = (rate * TICK_MS) / 1000;
  const end = Date.now() + ms;
  let sent = 0;
  while (Date.now() < end) {
    for (let i = 0; i < perTick; i++) noteMainShape(history);
    sent += perTick;
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  return sent;
}
