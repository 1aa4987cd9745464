import "reflect-metadata";
import type { CoreAppOptions } from "../app/core-app";
import { decoratorCall } from "./decorator-call";
import { MODULE_METADATA } from "./metadata-keys";

/** A handler class: constructed with no arguments, or given as an instance already built. */
export type HandlerClass = new () => object;

export interface ModuleOptions extends CoreAppOptions {
  /** The app's name: it names the data directory and appears in logs. */
  name: string;
  /** Classes (or instances) whose @Task methods become the app's tasks. */
  handlers: ReadonlyArray<HandlerClass | object>;
}

/**
 * What @Module returns: a class decorator, legacy (`experimentalDecorators`) or standard
 * (TypeScript's default).
 */
export interface ModuleClassDecorator {
  /** Legacy form, with `experimentalDecorators`. */
  (target: Function): void;
  /** Standard form. */
  <C extends abstract new (...args: never[]) => unknown>(value: C, context: ClassDecoratorContext<C>): void;
}

/** Declares an application: its name, handler classes and app options. Start it with bootstrap(). */
export function Module(options: ModuleOptions): ModuleClassDecorator {
  return (...args: unknown[]): void => {
    const call = decoratorCall(args);
    // Both forms get the class itself: the metadata goes on it the same way.
    const target = call.form === "legacy-class" ? call.target : call.form === "standard" && call.context.kind === "class" ? call.value : undefined;
    if (typeof target !== "function") {
      throw new TypeError("@Module decorates a class, as in `@Module({ name, handlers }) export class AppModule {}`; here it was applied to something else");
    }
    if (typeof options?.name !== "string") throw new TypeError(`@Module on ${target.name}: name is required`);
    if (!Array.isArray(options.handlers)) throw new TypeError(`@Module on ${target.name}: handlers must be a list of classes`);
    Reflect.defineMetadata(MODULE_METADATA, options, target);
  };
}

export function moduleOptionsOf(target: Function): ModuleOptions | undefined {
  return Reflect.getMetadata(MODULE_METADATA, target);
}
