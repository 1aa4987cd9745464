const QUEUE = Symbol.for("webhook-tasks:queue");
const QUEUE_NAME = /^[A-Za-z0-9_.:\-/]{1,200}$/;

/**
 * A named queue carrying values of type `T`: one task's `emit`, another task's `source`.
 * Export it from one module and import it on both sides, so the compiler checks that the
 * emitting task returns a `T` and gives the consuming task a `T`. A plain string names the
 * same queue without the types.
 *
 *   export const totals = new Queue<Total>("totals");
 */
export class Queue<T> {
  /** Type only: carries `T` (nothing at run time). */
  declare readonly valueType?: T;

  constructor(readonly name: string) {
    if (typeof name !== "string" || !QUEUE_NAME.test(name)) {
      throw new TypeError(`Queue: the name must be 1-200 letters, digits or _ . : - /, got ${JSON.stringify(name)}`);
    }
    // A brand rather than instanceof: two copies of the package may both be loaded.
    Object.defineProperty(this, QUEUE, { value: true });
  }

  toString(): string {
    return this.name;
  }
}

export function isQueue(value: unknown): value is Queue<unknown> {
  return typeof value === "object" && value !== null && (value as { [QUEUE]?: unknown })[QUEUE] === true;
}

export function queueName(queue: Queue<unknown>): string {
  return queue.name;
}
