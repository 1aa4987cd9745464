import "reflect-metadata";
import type { Queue } from "../app/queue";
import type { TaskContext } from "../app/task-context";
import type { TaskOptions, TaskResult, TaskSource } from "../app/task";
import type { WebhookEvent } from "../sources/webhook/webhook-event";
import type { Source } from "../sources/source";
import type { WebhookSource } from "../sources/webhook/webhook-source";
import type { SenderEvent, TypedSender } from "../sources/webhook/event-names/event-types";
import type { BatchOptions } from "../app/flow/group-options";
import { decoratorCall, type DecoratorCall, type StandardContext } from "./decorator-call";
import { TASKS_METADATA } from "./metadata-keys";
import { SYMBOL_METADATA } from "./symbol-metadata";

/**
 * The least a webhook task's method must accept: a WebhookEvent whatever its body and name, so
 * `event: WebhookEvent<Order>` compiles and `event: number` does not.
 */
type AnyWebhookEvent = Omit<WebhookEvent<never>, "name"> & { readonly name: never };

/** What @Task records about one method. */
export interface TaskMethodMetadata {
  readonly method: string | symbol;
  readonly options: TaskOptions<never>;
}

/** A method @Task accepts: `(ctx, event: E) => R`, async or not; `C` types `ctx.batch`. */
export type TaskMethod<E, R, C = never> = (ctx: TaskContext<C>, event: E) => TaskResult<R> | Promise<TaskResult<R>>;

/**
 * What @Task returns: a method decorator that checks the method's type, `(ctx, event: E) =>
 * R`, where `E` comes from a typed Queue source and `R` from a typed Queue emit. It works as a
 * legacy decorator (`experimentalDecorators`) and as a standard one (TypeScript's default).
 */
export interface TaskMethodDecorator<E, R, C = never> {
  /** Legacy form, with `experimentalDecorators`. */
  <M extends TaskMethod<E, R, C>>(target: object, propertyKey: string | symbol, descriptor: TypedPropertyDescriptor<M>): void;
  /** Standard form. */
  <This, M extends TaskMethod<E, R, C>>(value: M, context: ClassMethodDecoratorContext<This, M>): void;
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
export function Task<T, R = unknown>(options: TaskOptions<Queue<T>, R> & { batch: BatchOptions<T> }): TaskMethodDecorator<T[], R, T>;
export function Task<T, R = unknown>(options: TaskOptions<Queue<T>, R>): TaskMethodDecorator<T, R, T>;
export function Task<X extends TypedSender, P extends string, R = unknown>(
  options: TaskOptions<WebhookSource<X>, R, SenderEvent<X, NoInfer<P>>> & { on: P | readonly P[] },
): TaskMethodDecorator<SenderEvent<X, P>, R, SenderEvent<X, P>>;
/** A batched webhook source: the method takes an array of webhook events. */
export function Task<E = WebhookEvent, R = unknown, S extends Source = Source>(options: TaskOptions<S, R, E> & { batch: BatchOptions<E> }): TaskMethodDecorator<AnyWebhookEvent[], R, WebhookEvent<never>>;
/** A webhook source: `ctx` holds webhook events (any body), as the method's own annotation says; a method must take one. */
export function Task<E = WebhookEvent, R = unknown, S extends Source = Source>(options: TaskOptions<S, R, E>): TaskMethodDecorator<AnyWebhookEvent, R, WebhookEvent<never>>;
/** A queue named by a plain string (or a source that may be either): untyped, the method says what it takes. */
export function Task<E = unknown, R = unknown, S extends Source | string = Source | string>(options: TaskOptions<S, R, E>): TaskMethodDecorator<never, R>;
export function Task(options: TaskOptions<TaskSource, unknown, never>): TaskMethodDecorator<never, unknown> {
  const decorator = (...args: unknown[]): void => {
    const call = decoratorCall(args);
    if (call.form === "standard") standardMethod(call.value, call.context, options);
    else if (call.form === "legacy-member") legacyMethod(call, options);
    else throw new TypeError("@Task decorates a method of a handler class, as in `@Task({ source }) async handle(ctx, event) {}`; here it was applied to something else");
  };
  return decorator as TaskMethodDecorator<never, unknown>;
}

/** Legacy form: the metadata goes on the class through reflect-metadata. */
function legacyMethod(call: Extract<DecoratorCall, { form: "legacy-member" }>, options: TaskOptions<TaskSource, unknown, never>): void {
  const { target, key, descriptor } = call;
  if (typeof descriptor?.value !== "function") {
    throw new TypeError(`@Task can only decorate methods; ${String(key)} is not one`);
  }
  // A static method's target is the class itself: its `constructor` is Function, where no one looks.
  if (typeof target === "function") throw new TypeError(`@Task ${target.name}.${String(key)}: a task method is a public instance method, not static`);
  const paramTypes: unknown[] | undefined = Reflect.getMetadata("design:paramtypes", target, key);
  checkParameters(`${target.constructor.name}.${String(key)}`, paramTypes?.length ?? (descriptor.value as Function).length);
  const record: TaskMethodMetadata = { method: key, options: options as TaskOptions<never> };
  const existing: TaskMethodMetadata[] = Reflect.getOwnMetadata(TASKS_METADATA, target.constructor) ?? [];
  Reflect.defineMetadata(TASKS_METADATA, [...existing, record], target.constructor);
}

/**
 * Standard form: the class does not exist yet, so the metadata goes on `context.metadata`,
 * which becomes `Class[Symbol.metadata]`.
 */
function standardMethod(value: unknown, context: StandardContext, options: TaskOptions<TaskSource, unknown, never>): void {
  const name = String(context.name);
  if (context.kind !== "method" || typeof value !== "function") throw new TypeError(`@Task can only decorate methods; ${name} is a ${context.kind}`);
  if (context.static || context.private) throw new TypeError(`@Task ${name}: a task method is a public instance method, not ${context.static ? "static" : "private (#)"}`);
  checkParameters(name, value.length);
  const metadata = context.metadata;
  if (metadata === undefined) throw new TypeError(`@Task ${name}: the compiler passed no decorator metadata (Symbol.metadata is missing)`);
  const record: TaskMethodMetadata = { method: context.name as string | symbol, options: options as TaskOptions<never> };
  const existing = Object.hasOwn(metadata, TASKS_METADATA) ? (metadata[TASKS_METADATA] as TaskMethodMetadata[]) : [];
  metadata[TASKS_METADATA] = [...existing, record];
}

function checkParameters(where: string, count: number): void {
  if (count > 2) throw new TypeError(`@Task ${where}: a task takes (ctx, event), not ${count} parameters`);
}

/** @Task methods of a class, its ancestors' first, whichever form of decorator recorded them. */
export function taskMethodsOf(cls: Function): TaskMethodMetadata[] {
  const chain: Function[] = [];
  for (let c: Function | null = cls; c && c !== Function.prototype && c !== Object; c = Object.getPrototypeOf(c)) chain.unshift(c);
  return chain.flatMap((c) => [...((Reflect.getOwnMetadata(TASKS_METADATA, c) as TaskMethodMetadata[] | undefined) ?? []), ...standardTasksOf(c)]);
}

/** What standard decorators recorded on this class itself (not inherited through Symbol.metadata). */
function standardTasksOf(c: Function): TaskMethodMetadata[] {
  if (!Object.hasOwn(c, SYMBOL_METADATA)) return [];
  const metadata = (c as unknown as Record<symbol, Record<PropertyKey, unknown> | null | undefined>)[SYMBOL_METADATA];
  return metadata && Object.hasOwn(metadata, TASKS_METADATA) ? (metadata[TASKS_METADATA] as TaskMethodMetadata[]) : [];
}
