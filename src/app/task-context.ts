import type { Logger } from "../util/logger";
import type { StateStore } from "../store/store";
import type { CoreApp } from "./core-app";
import type { Queue } from "./queue";
import type { EmitOptions } from "./flow/run-emits";

/** What a task receives besides its event. `E` types `batch`: the task's events. */
export interface TaskContext<E = unknown> {
  readonly app: CoreApp;
  /** The task's name (a method task: "Class.method"). */
  readonly task: string;
  /** Id of the event or message being handled; stable across retries of it. */
  readonly eventId: string;
  /** 1 on the first delivery, 2 on the first retry, ... */
  readonly attempt: number;
  /** State kept in the app's store, scoped to this task. */
  readonly state: StateStore;
  readonly logger: Logger;
  /** Exact bytes of the webhook request (an empty Buffer for queue messages): verify signatures over these. */
  readonly rawBody: Buffer;
  /**
   * The events this run handles, oldest first: with `debounce`, every event of the burst (the
   * handler's `event` is the last); with `batch`, the handler's array; otherwise `[event]`.
   */
  readonly batch: readonly E[];
  /**
   * Sends `value` to a queue, at once or later (`{ delayMs }`, `{ runAt }`): written with this
   * run's completion, in the same step, so a run that fails and is retried has sent nothing.
   * See docs/flow-control.md.
   */
  emit<T>(queue: Queue<T>, value: T, options?: EmitOptions): void;
  /** A queue by name: any value but `undefined` (refused at run time too), `unknown` included. */
  emit<V>(queue: string, value: [V] extends [undefined] ? never : V, options?: EmitOptions): void;
}
