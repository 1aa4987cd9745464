import type { DeadLetter, DeadLetterStore, QueuedMessage, StoreRefusal } from "../store";
import type { Logger } from "../../util/logger";
import { RateLimit } from "../../util/rate-limit";
import { valueBytes } from "./heap-bytes";

/** What the dead letters need from their store. */
export interface MemoryDeadLetterHost {
  /** The count of a queue's dead letters, kept on the queue: admission reads it beside the queue's size. */
  counter(queue: string): { dead: number };
  /** Puts a replayed message back at the end of its queue. */
  requeue(queue: string, message: QueuedMessage): void;
}

/** At most one warning per this long that dead letters fill the store. */
const WARN_EVERY_MS = 60_000;

/** Fixed part of a dead letter (the letter, its message and their fields), about as the heap holds it. */
const LETTER_BYTES = 400;

/**
 * Dead letters in the process's heap, never evicted (that would lose events without a word):
 * they count against the store's limits instead, so a store full of them refuses new events
 * until they are replayed or purged. Each is measured once, when it dies.
 */
export class MemoryDeadLetters implements DeadLetterStore {
  private readonly letters = new Map<string, { readonly letter: DeadLetter; readonly bytes: number }>();
  /** About what the letters hold in the heap (raw bodies, payloads, errors). */
  bytes = 0;
  private readonly warnings = new RateLimit(WARN_EVERY_MS);

  constructor(
    private readonly host: MemoryDeadLetterHost,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.letters.size;
  }

  add(letter: DeadLetter): void {
    this.remove(letter.message.id);
    const bytes = letterBytes(letter);
    this.letters.set(letter.message.id, { letter, bytes });
    this.bytes += bytes;
    this.host.counter(letter.queue).dead++;
  }

  async list(queue?: string): Promise<DeadLetter[]> {
    const out: DeadLetter[] = [];
    for (const { letter } of this.letters.values()) if (queue === undefined || letter.queue === queue) out.push(letter);
    return out.sort((a, b) => a.diedAt - b.diedAt);
  }

  async get(id: string): Promise<DeadLetter | undefined> {
    return this.letters.get(id)?.letter;
  }

  async replay(id: string): Promise<boolean> {
    const letter = this.remove(id);
    if (letter === undefined) return false;
    // Left out rather than set to undefined: the message reads back as it was first given.
    const { lastError: _lastError, ...message } = letter.message;
    this.host.requeue(letter.queue, { ...message, attempts: 0 });
    return true;
  }

  async purge(filter: { id?: string; queue?: string } = {}): Promise<number> {
    let count = 0;
    for (const [id, { letter }] of this.letters) {
      if ((filter.id === undefined || filter.id === id) && (filter.queue === undefined || filter.queue === letter.queue)) {
        this.remove(id);
        count++;
      }
    }
    return count;
  }

  /** The refusal once the letters' bytes reach `maxBytes`: every queue's new events wait for them to go. */
  storeFull(maxBytes: number): StoreRefusal {
    this.warn(`maxBytes (${maxBytes})`, "store_full", {});
    return { code: "store_full", message: `the store's dead letters hold ${maxBytes} bytes, its limit`, retryAfterSeconds: 10 };
  }

  /** The refusal of a queue its dead letters fill (its messages alone would leave room). */
  queueFull(queue: string, dead: number, maxQueued: number): StoreRefusal {
    this.warn(`maxQueued (${maxQueued})`, "queue_full", { queue, queueDeadLetters: dead });
    return { code: "queue_full", message: `queue "${queue}" holds ${maxQueued} messages, ${dead} of them dead letters`, retryAfterSeconds: 10 };
  }

  /** Dead letters do not go by themselves: whoever runs the app must replay or purge them. */
  private warn(limit: string, code: StoreRefusal["code"], fields: Record<string, unknown>): void {
    const passed = this.warnings.pass();
    if (passed === undefined) return;
    this.logger.warn(
      { store: "memory", code, ...fields, deadLetters: this.letters.size, deadLetterBytes: this.bytes, suppressed: passed.suppressed },
      `dead letters fill the memory store up to its ${limit}: new events are answered 503 ${code} until they are replayed or purged (the console's dead letters, or app.deadLetters.replay / purge); dead letters are never dropped`,
    );
  }

  private remove(id: string): DeadLetter | undefined {
    const kept = this.letters.get(id);
    if (kept === undefined) return undefined;
    this.letters.delete(id);
    this.bytes -= kept.bytes;
    this.host.counter(kept.letter.queue).dead--;
    return kept.letter;
  }
}

function letterBytes(letter: DeadLetter): number {
  const { message } = letter;
  return LETTER_BYTES + (message.raw?.length ?? 0) + valueBytes(message.payload) + letter.error.length + (message.lastError?.length ?? 0) + letter.task.length;
}
