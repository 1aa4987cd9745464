import type { TaskContext } from "./task-context";
import type { TaskResult } from "./task";

/** `T` with every object and array made readonly, deeply (what `as const` gives a literal). */
export type Frozen<T> = T extends (...args: never[]) => unknown ? T : T extends object ? { readonly [K in keyof T]: Frozen<T[K]> } : T;

/** What a handler emitting to a `Queue<R>` may return: an `R`, or the same read-only. */
export type EmittableResult<R> = TaskResult<R> | TaskResult<Frozen<R>>;

/**
 * A handler whose return type `H` is inferred on its own (by a `const` type parameter of
 * `app.task`) and then checked against the queue's type. Inferred as part of `R` instead, a
 * handler that takes no parameters would have its literals widened before `R` is known:
 * `async () => ({ kind: "a" })` would return `{ kind: string }` and miss `Queue<{ kind: "a" | "b" }>`.
 * `const` inference makes arrays read-only, hence the `Frozen` alternative.
 */
export type ResultCheckedHandler<E, H> = (ctx: TaskContext<NoInfer<E>>, event: E) => H | Promise<H>;

/** A batched task's handler (`batch`): the events of the batch, oldest first, checked as ResultCheckedHandler is. */
export type BatchCheckedHandler<E, H> = (ctx: TaskContext<NoInfer<E>>, events: E[]) => H | Promise<H>;
