import { Integer, Optional, Required, Text } from "./rules";

/** A key path into the event: `body.<path>`, `headers.<name>` or `query.<name>` for a webhook task; a path into the value for a queue task. */
export const FLOW_KEY_PATH = /^[^.\s]+(\.[^.\s]+)*$/;
const KEY_HINT = "a dotted path into the event, e.g. body.account.id or headers.x-shop-domain";

/** `tasks[].concurrency` as a mapping: at most `limit` runs at once per key, across replicas. */
export class ConcurrencyConfig {
  @Required() @Integer(1) limit!: number;
  @Optional() @Text(FLOW_KEY_PATH, KEY_HINT) key?: string;
  @Optional() @Integer(1) perProcess?: number;
}

/** `tasks[].rateLimit`: at most `limit` runs started per `periodMs` per key, across replicas. */
export class RateLimitConfig {
  @Required() @Integer(1) limit!: number;
  @Required() @Integer(1, 2 ** 31 - 1) periodMs!: number;
  @Optional() @Text(FLOW_KEY_PATH, KEY_HINT) key?: string;
}

/** `tasks[].debounce`: a burst of events with one key runs the task once, `periodMs` after its last event (or `maxWaitMs` after its first). */
export class DebounceConfig {
  @Required() @Integer(1, 2 ** 31 - 1) periodMs!: number;
  @Optional() @Text(FLOW_KEY_PATH, KEY_HINT) key?: string;
  @Optional() @Integer(1, 2 ** 31 - 1) maxWaitMs?: number;
}

/** `tasks[].batch`: the handler receives up to `maxSize` events at once, after at most `maxWaitMs`. */
export class BatchConfig {
  @Required() @Integer(1, 10_000) maxSize!: number;
  @Required() @Integer(1, 2 ** 31 - 1) maxWaitMs!: number;
  @Optional() @Text(FLOW_KEY_PATH, KEY_HINT) key?: string;
}
