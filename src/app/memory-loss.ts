import type { Store } from "../store/store";
import { errorMessage, type Logger } from "../util/logger";

/**
 * Before a store that keeps nothing (the memory store) closes: says how many accepted messages
 * and dead letters go with it. Their senders heard 2xx; without this line they vanish without a word.
 */
export async function warnWhatIsLost(store: Store, logger: Logger): Promise<void> {
  if (store.durable) return;
  try {
    const queues: Record<string, number> = {};
    let messages = 0;
    let deadLetters = 0;
    for (const queue of await store.queueNames()) {
      const stats = await store.stats(queue);
      deadLetters += stats.deadLetters;
      const count = stats.waiting + stats.inFlight;
      if (count === 0) continue;
      queues[queue] = count;
      messages += count;
    }
    if (messages === 0 && deadLetters === 0) return;
    const what = [
      ...(messages === 0 ? [] : [`${messages} message${messages === 1 ? "" : "s"} not yet handled`]),
      ...(deadLetters === 0 ? [] : [`${deadLetters} dead letter${deadLetters === 1 ? "" : "s"}`]),
    ];
    logger.warn(
      { store: store.engine, messages, queues, deadLetters },
      `${what.join(" and ")} ${messages + deadLetters === 1 ? "is" : "are"} lost with the ${store.engine} store, which keeps nothing past the process (store: embedded, or a postgres:// URL, keeps them for the next start)`,
    );
  } catch (error) {
    logger.debug({ error: errorMessage(error) }, "could not count what the store loses");
  }
}
