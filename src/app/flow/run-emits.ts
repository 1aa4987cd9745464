import { handedOnForm } from "../../store/payload-codec";
import type { EmitRecord, QueuedMessage } from "../../store/store";
import { errorMessage } from "../../util/logger";
import { isQueue, queueName, type Queue } from "../queue";

/** When a message sent with `ctx.emit` becomes claimable: after `delayMs`, or at `runAt`. */
export type EmitOptions = { readonly delayMs: number; readonly runAt?: undefined } | { readonly runAt: Date | number; readonly delayMs?: undefined };

/** A value a run sent with `ctx.emit`, written with the run's completion. */
export interface PendingEmit {
  readonly queue: string;
  readonly payload: unknown;
  /** Claimable from this time (ms since the epoch); undefined: at once. */
  readonly runAt: number | undefined;
}

const QUEUE_NAME = /^[A-Za-z0-9_.:\-/]{1,200}$/;
/** Longest delay: about 68 years is far enough, and keeps times exact in a double. */
const MAX_DELAY_MS = 2 ** 41;

/**
 * Checks one `ctx.emit` call and takes the value's stored form at once (a value no engine can
 * store, or one changed after the call, fails or stays as sent). Throws TypeError.
 */
export function pendingEmit(queue: Queue<unknown> | string, value: unknown, options: EmitOptions | undefined, now: number): PendingEmit {
  const name = isQueue(queue) ? queueName(queue) : queue;
  if (typeof name !== "string" || !QUEUE_NAME.test(name)) throw new TypeError(`ctx.emit: the queue must be a Queue or a queue name of 1-200 letters, digits or _ . : - /, got ${String(name)}`);
  if (value === undefined) throw new TypeError(`ctx.emit("${name}"): the value is undefined; send a value (null, an object...)`);
  let payload: unknown;
  try {
    payload = handedOnForm(value);
  } catch (error) {
    throw new TypeError(`ctx.emit("${name}"): the value cannot be stored: ${errorMessage(error)}`);
  }
  return { queue: name, payload, runAt: runAtOf(name, options, now) };
}

function runAtOf(name: string, options: EmitOptions | undefined, now: number): number | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null) throw new TypeError(`ctx.emit("${name}"): options must be { delayMs } or { runAt }`);
  const { delayMs, runAt } = options as { delayMs?: unknown; runAt?: unknown };
  for (const key of Object.keys(options)) if (key !== "delayMs" && key !== "runAt") throw new TypeError(`ctx.emit("${name}"): unknown option "${key}" (known: delayMs, runAt)`);
  if (delayMs !== undefined && runAt !== undefined) throw new TypeError(`ctx.emit("${name}"): give delayMs or runAt, not both`);
  if (delayMs !== undefined) {
    if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > MAX_DELAY_MS) throw new TypeError(`ctx.emit("${name}"): delayMs must be a number of milliseconds from 0 to ${MAX_DELAY_MS}, got ${String(delayMs)}`);
    return delayMs === 0 ? undefined : now + delayMs;
  }
  if (runAt !== undefined) {
    const at = runAt instanceof Date ? runAt.getTime() : runAt;
    if (typeof at !== "number" || !Number.isFinite(at) || at < 0 || at > now + MAX_DELAY_MS) throw new TypeError(`ctx.emit("${name}"): runAt must be a Date or a time in ms since the epoch, got ${String(runAt)}`);
    return at <= now ? undefined : at;
  }
  return undefined;
}

/**
 * The records a run's `ctx.emit` calls become: one message per call, fanned out to the queue's
 * consumers by `copiesFor`. Ids come from the input's id, the task and the call's place in the
 * run: a run that fails emits nothing, and the one that succeeds later emits the same ids.
 * A delayed copy leaves its ordering key out: its time, not its key's line, says when it runs.
 */
export function emitRecords(
  pending: readonly PendingEmit[],
  idOf: (index: number) => string,
  traceContext: Readonly<Record<string, string>> | undefined,
  copiesFor: (queue: string, message: QueuedMessage) => EmitRecord[],
): EmitRecord[] {
  const out: EmitRecord[] = [];
  const enqueuedAt = Date.now();
  pending.forEach((emit, index) => {
    const base: QueuedMessage = { id: idOf(index), payload: emit.payload, attempts: 0, enqueuedAt, ...(traceContext && { traceContext }) };
    for (const copy of copiesFor(emit.queue, base)) {
      if (emit.runAt === undefined) out.push(copy);
      else {
        const { orderingKey: _delayedNotOrdered, ...message } = copy.message;
        out.push({ queue: copy.queue, message: { ...message, runAt: emit.runAt } });
      }
    }
  });
  return out;
}
