import { CoreApp, type CoreAppOptions } from "../app/core-app";
import type { TaskOptions } from "../app/task";
import type { TaskContext } from "../app/task-context";
import type { Source } from "../sources/source";
import { moduleOptionsOf, type HandlerClass } from "./module.decorator";
import { taskMethodsOf } from "./task.decorator";

/**
 * Builds the CoreApp a @Module class declares: each handler class is instantiated once and
 * each @Task method becomes a task bound to that instance. Does not start it.
 */
export function createApp(moduleClass: Function, overrides: Partial<CoreAppOptions> = {}): CoreApp {
  const options = moduleOptionsOf(moduleClass);
  if (!options) throw new TypeError(`${moduleClass.name} is not a module: decorate it with @Module({ name, handlers })`);
  const { name, handlers, ...appOptions } = options;
  const app = new CoreApp(name, { ...appOptions, ...overrides });
  let count = 0;
  for (const handler of handlers) {
    const instance = typeof handler === "function" ? new (handler as HandlerClass)() : handler;
    const cls = instance.constructor;
    for (const { method, options: taskOptions } of taskMethodsOf(cls)) {
      const fn = (instance as Record<string | symbol, unknown>)[method] as (ctx: TaskContext, event: unknown) => unknown;
      // Options were typed where @Task was written; here they are only passed on.
      const named = { ...taskOptions, name: taskOptions.name ?? `${cls.name}.${String(method)}` } as TaskOptions<Source | string>;
      app.task(named, (ctx: TaskContext, event: unknown) => fn.call(instance, ctx, event));
      count++;
    }
  }
  if (count === 0) throw new TypeError(`module ${moduleClass.name} (${name}): none of its handlers has a @Task method`);
  return app;
}

/** Builds and starts the app of a @Module class; resolves to the started CoreApp. */
export async function bootstrap(moduleClass: Function, overrides: Partial<CoreAppOptions> = {}): Promise<CoreApp> {
  return createApp(moduleClass, overrides).start();
}
