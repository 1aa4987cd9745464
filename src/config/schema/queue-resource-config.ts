import { OneOf, Required } from "./rules";

/** Queue names: what the store accepts as a queue key. */
export const QUEUE_NAME = /^[A-Za-z0-9_.:\-/]{1,200}$/;

/**
 * `resources.<name>` with `type: queue`: a named queue in the app's store, written by the tasks
 * that `emit` to it and read by the task whose `source` it is.
 */
export class QueueResourceConfig {
  @Required() @OneOf(["queue"]) type!: "queue";
}
