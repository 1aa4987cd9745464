import "reflect-metadata";
import type { Queue } from "../app/queue";
import type { TaskContext } from "../app/task-context";
import type { TaskOptions, TaskResult, TaskSource } from "../app/task";
import type { WebhookEvent } from "../sources/webhook/webhook-event";
import type { Source } from "../sources/source";
import type { WebhookSource } from "../sources/webhook/webhook-source";
import type { SenderEvent, TypedSender } from "../sources/webhook/event-names/event-types";
import { TASKS_METADATA } from "./metadata-keys";

/** What @Task records about one method. */
export interface TaskMethodMetadata {
  readonly method: string | symbol;
  readonly options: TaskOptions<never>;
}

/**
 * Marks an async method `(ctx, event)` as a task. Its name defaults to "Class.method".
 *
 *   class GitHubHandlers {
 *     @Task({ source: githubHook, emit: "pushes" })
 *     async onPush(ctx: TaskContext, event: WebhookEvent) { ... }
 *   }
 *
 * `E` types the event for `orderingKey`: `@Task<WebhookEvent<PushBody>>({ source, orderingKey: (e) => e.body.repo })`.
 */
/**
 * What @Task returns: a method decorator that checks the method's type, `(ctx, event: E) =>
 * R`, where `E` comes from a typed Queue source and `R` from a typed Queue emit.
 */
export type TaskMethodDecorator<E, R> = <M extends (ctx: TaskContext, event: E) => TaskResult<R> | Promise<TaskResult<R>>>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

export function Task<T, R = unknown>(options: TaskOptions<Queue<T>, R>): TaskMethodDecorator<T, R>;
export function Task<X extends TypedSender, P extends string, R = unknown>(
  options: TaskOptions<WebhookSource<X>, R, SenderEvent<X, NoInfer<P>>> & { on: P | readonly P[] },
): TaskMethodDecorator<SenderEvent<X, P>, R>;
export function Task<E = WebhookEvent, R = unknown, S extends Source | string = Source | string>(options: TaskOptions<S, R, E>): TaskMethodDecorator<never, R>;
export function Task(options: TaskOptions<TaskSource, unknown, never>): TaskMethodDecorator<never, unknown> {
  return (target, propertyKey, descriptor) => {
    if (typeof descriptor.value !== "function") {
      throw new TypeError(`@Task can only decorate methods; ${String(propertyKey)} is not one`);
    }
    const paramTypes: unknown[] | undefined = Reflect.getMetadata("design:paramtypes", target, propertyKey);
    if (paramTypes !== undefined && paramTypes.length > 2) {
      throw new TypeError(`@Task ${target.constructor.name}.${String(propertyKey)}: a task takes (ctx, event), not ${paramTypes.length} parameters`);
    }
    const existing: TaskMethodMetadata[] = Reflect.getOwnMetadata(TASKS_METADATA, target.constructor) ?? [];
    Reflect.defineMetadata(TASKS_METADATA, [...existing, { method: propertyKey, options: options as TaskOptions<never> }], target.constructor);
  };
}

/** @Task methods of a class, its ancestors' first. */
export function taskMethodsOf(cls: Function): TaskMethodMetadata[] {
  const chain: Function[] = [];
  for (let c: Function | null = cls; c && c !== Function.prototype && c !== Object; c = Object.getPrototypeOf(c)) chain.unshift(c);
  return chain.flatMap((c) => (Reflect.getOwnMetadata(TASKS_METADATA, c) as TaskMethodMetadata[] | undefined) ?? []);
}
