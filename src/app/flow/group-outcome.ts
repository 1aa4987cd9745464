import type { EmitRecord, QueuedMessage, Store } from "../../store/store";
import { handedOnForm } from "../../store/payload-codec";
import { errorMessage } from "../../util/logger";
import type { CoreApp } from "../core-app";
import type { OutcomeRegistry } from "../outcome-registry";
import type { RegisteredTask } from "../task-registry";
import type { RunObservation } from "../run-observation";
import { backoffDelay } from "../retry-policy";
import { PermanentError } from "../permanent-error";
import { TaskTimeoutError } from "../task-timeout";
import { writeDeadLetter } from "../dead-letter-message";
import { emittedId, type Settled } from "../task-runner";
import { emitRecords, type PendingEmit } from "./run-emits";

/**
 * What a group's run sends on, written with the group's completion: its return value to the
 * task's emit queue, and what it passed to ctx.emit. Ids come from the group's newest event, as a
 * single run's come from its event. Throws when a value cannot be stored or routed (a task failure).
 */
export function groupEmits(
  task: RegisteredTask,
  app: Pick<CoreApp, "copiesFor">,
  newest: QueuedMessage,
  result: unknown,
  sent: readonly PendingEmit[] | undefined,
  run: RunObservation,
): EmitRecord[] | undefined {
  let emit: EmitRecord[] | undefined;
  if (sent !== undefined) emit = emitRecords(sent, (i) => emittedId(newest.id, `${task.name}\u0000emit\u0000${i}`), run.traceContext, (queue, m) => app.copiesFor(queue, m));
  if (task.emit !== undefined && result !== undefined) {
    let payload: unknown;
    try {
      payload = handedOnForm(result);
    } catch (error) {
      throw new Error(`the task's result cannot be stored: ${errorMessage(error)}`);
    }
    const traceContext = run.traceContext;
    const message: QueuedMessage = { id: emittedId(newest.id, task.name), payload, attempts: 0, enqueuedAt: Date.now(), ...(traceContext && { traceContext }) };
    const copies = app.copiesFor(task.emit, message);
    emit = emit === undefined ? copies : [...copies, ...emit];
  }
  return emit;
}

/**
 * A group's run failed: every message of the group is retried after the task's backoff (each
 * with its attempt counted), or, on a PermanentError or the group's last attempt, becomes a dead
 * letter. A caller waiting for one event's result (ack "processed") is told instead, and that
 * event leaves the group: its sender sends it again. The group's attempt is the most any of its
 * messages had, plus this one.
 */
export async function failGroup(
  task: RegisteredTask,
  parts: { readonly store: Store; readonly outcomes: OutcomeRegistry },
  messages: readonly QueuedMessage[],
  run: RunObservation,
  error: unknown,
): Promise<Settled> {
  const { store, outcomes } = parts;
  const attempts = Math.max(...messages.map((m) => m.attempts)) + 1;
  const text = errorMessage(error);
  const logger = run.logger;
  const failure = error instanceof TaskTimeoutError ? "timeout" : undefined;
  const waiting = messages.filter((m) => outcomes.settle(m.id, { ok: false, error }));
  for (const message of waiting) await store.complete(task.queue, message.id);
  const rest = waiting.length === 0 ? messages : messages.filter((m) => !waiting.includes(m));
  if (rest.length === 0) return { next: "answered", outcome: failure ?? "retry", error };
  if (attempts >= task.retry.attempts || error instanceof PermanentError) {
    logger.error({ err: error, attempts, events: rest.length }, error instanceof PermanentError ? "task failed permanently; every event of the group is kept as a dead letter" : "task failed for the last time; every event of the group is kept as a dead letter");
    const stack = error instanceof Error && typeof error.stack === "string" ? error.stack : text;
    await eachAtOnce(rest, (message) => writeDeadLetter(store, task, { ...message, attempts: message.attempts + 1, lastError: stack }, text, logger));
    return { next: "dead_letter", outcome: failure ?? "dead_letter", error };
  }
  const delay = backoffDelay(task.retry, attempts);
  logger.warn({ err: error, retryInMs: delay, events: rest.length }, "task failed; retrying the whole group");
  const retryAt = Date.now() + delay;
  await eachAtOnce(rest, (message) => store.retryLater(task.queue, { ...message, attempts: message.attempts + 1, lastError: text }, retryAt));
  return { next: "retry", outcome: failure ?? "retry", retryAt, error };
}

/**
 * One write per message, all started at once: an engine that commits the writes of one turn
 * together (the embedded store) then writes a group of thousands in a few transactions rather
 * than one after the other (seconds). Every write is tried; the first failure is thrown.
 */
async function eachAtOnce(messages: readonly QueuedMessage[], write: (message: QueuedMessage) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(messages.map(write));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed !== undefined) throw failed.reason;
}
