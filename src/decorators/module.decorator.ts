import "reflect-metadata";
import type { CoreAppOptions } from "../app/core-app";
import { MODULE_METADATA } from "./metadata-keys";

/** A handler class: constructed with no arguments, or given as an instance already built. */
export type HandlerClass = new () => object;

export interface ModuleOptions extends CoreAppOptions {
  /** The app's name: it names the data directory and appears in logs. */
  name: string;
  /** Classes (or instances) whose @Task methods become the app's tasks. */
  handlers: ReadonlyArray<HandlerClass | object>;
}

/** Declares an application: its name, handler classes and app options. Start it with bootstrap(). */
export function Module(options: ModuleOptions): ClassDecorator {
  return (target) => {
    if (typeof options?.name !== "string") throw new TypeError(`@Module on ${target.name}: name is required`);
    if (!Array.isArray(options.handlers)) throw new TypeError(`@Module on ${target.name}: handlers must be a list of classes`);
    Reflect.defineMetadata(MODULE_METADATA, options, target);
  };
}

export function moduleOptionsOf(target: Function): ModuleOptions | undefined {
  return Reflect.getMetadata(MODULE_METADATA, target);
}
