import type { DeadLetter, DeadLetterStore, QueuedMessage } from "../store";
import type { EmbeddedDbs } from "./lmdb-env";
import { deadLetterKey } from "./keys";
import { replayedMessage } from "./records";
import type { StoreWriter } from "./store-writer";

/** What the dead letters need from their store; `use` throws (StoreRefusedError) while the store is not open. */
export interface DeadLetterHost {
  use(): { readonly dbs: EmbeddedDbs; readonly writer: StoreWriter };
  /**
   * Writes `message` at the end of `queue` inside the running write transaction; returns
   * what to do once that transaction is committed (count it, wake the queue's watchers).
   */
  requeue(queue: string, message: QueuedMessage): () => void;
}

/** Dead letters on disk, keyed by message id. Few by nature: listing reads them all. */
export class EmbeddedDeadLetters implements DeadLetterStore {
  constructor(private readonly host: DeadLetterHost) {}

  async list(queue?: string): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    for (const { value } of this.host.use().dbs.dead.getRange()) {
      if (queue === undefined || value.queue === queue) letters.push(value);
    }
    return letters.sort((a, b) => a.diedAt - b.diedAt);
  }

  async get(id: string): Promise<DeadLetter | undefined> {
    return this.host.use().dbs.dead.get(deadLetterKey(id));
  }

  /** Removal and requeue in one transaction: a letter is never both dead and queued, nor lost. */
  async replay(id: string): Promise<boolean> {
    const { dbs, writer } = this.host.use();
    const { dead } = dbs;
    const committed = await writer.run(() =>
      dead.transaction(() => {
        const letter = dead.get(deadLetterKey(id));
        if (!letter) return undefined;
        void dead.remove(deadLetterKey(id));
        return this.host.requeue(letter.queue, replayedMessage(letter.message));
      }),
    );
    if (!committed) return false;
    committed();
    return true;
  }

  async purge(filter: { id?: string; queue?: string } = {}): Promise<number> {
    const { dbs, writer } = this.host.use();
    const { dead } = dbs;
    return writer.run(() =>
      dead.transaction(() => {
        const doomed: string[] = [];
        if (filter.id !== undefined) {
          const letter = dead.get(deadLetterKey(filter.id));
          if (letter && (filter.queue === undefined || letter.queue === filter.queue)) doomed.push(deadLetterKey(filter.id));
        } else {
          for (const { key, value } of dead.getRange()) {
            if (filter.queue === undefined || value.queue === filter.queue) doomed.push(key);
          }
        }
        for (const key of doomed) void dead.remove(key);
        return doomed.length;
      }),
    );
  }
}
