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
