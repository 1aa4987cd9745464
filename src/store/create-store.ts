import type { Store } from "./store";
import { MemoryStore } from "./memory/memory-store";

export type StoreSpec = "memory" | Store;

export interface CreateStoreOptions {
  readonly appName: string;
  readonly dataDir?: string;
  readonly maxQueued?: number;
}

export function createStore(spec: StoreSpec, options: CreateStoreOptions): Store {
  if (spec === "memory") return new MemoryStore(options.maxQueued === undefined ? {} : { maxQueued: options.maxQueued });
  return spec;
}
