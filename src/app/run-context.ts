import type { QueuedMessage } from "../store/store";
import type { Logger } from "../util/logger";
import type { CoreApp } from "./core-app";
import type { Queue } from "./queue";
import type { RegisteredTask } from "./task-registry";
import type { TaskContext } from "./task-context";
import type { RunObservation } from "./run-observation";
import { pendingEmit, type EmitOptions, type PendingEmit } from "./flow/run-emits";

const EMPTY = Buffer.alloc(0);

/** A handler's `ctx`: its logger is the run's, made when first used. */
export class RunContext implements TaskContext {
  readonly task: string;
  readonly eventId: string;
  readonly attempt: number;
  readonly state: TaskContext["state"];
  readonly rawBody: Buffer;
  /** The events of the run: given for a group's run, else `[event]` made when first read. */
  #batch: readonly unknown[] | undefined;
  readonly #message: QueuedMessage;
  readonly #run: RunObservation;
  /** What `emit` was given; undefined until it is called. */
  #sent: PendingEmit[] | undefined;
  #ended = false;

  constructor(
    readonly app: CoreApp,
    task: RegisteredTask,
    message: QueuedMessage,
    run: RunObservation,
    batch?: readonly unknown[],
  ) {
    this.#run = run;
    this.#message = message;
    this.#batch = batch;
    this.task = task.name;
    this.eventId = message.id;
    this.attempt = message.attempts + 1;
    this.state = task.state;
    this.rawBody = message.raw ?? EMPTY;
  }

  get batch(): readonly unknown[] {
    return (this.#batch ??= [this.#message.payload]);
  }

  get logger(): Logger {
    return this.#run.logger;
  }

  emit<T>(queue: Queue<T> | string, value: T, options?: EmitOptions): void {
    if (this.#ended) throw new Error(`ctx.emit: the run of task "${this.task}" has ended; emit before the handler returns`);
    (this.#sent ??= []).push(pendingEmit(queue as Queue<unknown> | string, value, options, Date.now()));
  }

  /** The handler settled: what it emitted, and no more emits. */
  ended(): readonly PendingEmit[] | undefined {
    this.#ended = true;
    return this.#sent;
  }
}

