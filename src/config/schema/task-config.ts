import { AnyValue, Decimal, EventNames, Integer, Optional, Required, Section, Text } from "./rules";
import { BatchConfig, DebounceConfig, RateLimitConfig } from "./flow-config";

/** `<module_path>:<export_name>`; the module part may itself contain ":" (Windows drives). */
export const HANDLER_REF = /^(.+):([A-Za-z_$][\w$]*)$/;
export const TASK_NAME = /^[A-Za-z0-9_.:\-/]{1,200}$/;

/** `tasks[].handler`. */
export class HandlerConfig {
  @Required()
  @Text(HANDLER_REF, '"<module_path>:<export_name>", e.g. "./handlers.js:onPush"')
  ref!: string;
}

/** `tasks[].retry`: how a failing task is retried before its event becomes a dead letter. */
export class RetryConfig {
  @Optional() @Integer(1) attempts?: number;
  @Optional() @Integer(0) initialDelayMs?: number;
  @Optional() @Decimal(1) factor?: number;
  @Optional() @Integer(0) maxDelayMs?: number;
}

/** One entry of `tasks:`. */
export class TaskConfig {
  @Required() @Text(TASK_NAME, "1-200 letters, digits or _ . : - /") name!: string;
  /** Name of a resource: a webhook, or a queue another task emits to. */
  @Required() @Text() source!: string;
  @Required() @Section(() => HandlerConfig) handler!: HandlerConfig;
  /** Name of a queue resource that receives the task's return value. */
  @Optional() @Text() emit?: string;
  /** An integer (runs at once in this process), or { limit, key?, perProcess? } (per key, across replicas): checked by validateConfig. */
  @Optional() @AnyValue() concurrency?: unknown;
  /** At most `limit` runs started per `periodMs` per key, across replicas. */
  @Optional() @Section(() => RateLimitConfig) rateLimit?: RateLimitConfig;
  /** A burst of events with one key runs the task once, with every event of the burst. */
  @Optional() @Section(() => DebounceConfig) debounce?: DebounceConfig;
  /** The handler receives up to `maxSize` events at once. */
  @Optional() @Section(() => BatchConfig) batch?: BatchConfig;
  @Optional() @Section(() => RetryConfig) retry?: RetryConfig;
  /** Milliseconds a run may take before it counts as failed (default 5 minutes). */
  @Optional() @Integer(1, 2 ** 31 - 1) timeoutMs?: number;
  /** Event names the task takes, as the webhook's sender names them ("pull_request.opened", "invoice.*"). */
  @Optional() @EventNames() on?: string | string[];
  /** A declarative match on headers, query and body (see parse-filter.ts); checked by validateConfig. */
  @Optional() @AnyValue() filter?: unknown;
}
