/**
 * The listeners of `Store.watch`, per queue, as every engine keeps them. A listener that
 * throws never turns a committed write into a rejection: its error is thrown again on a later
 * turn, where it shows as the bug it is.
 */
export class QueueWatchers {
  private readonly byQueue = new Map<string, Set<() => void>>();

  watch(queue: string, listener: () => void): () => void {
    let set = this.byQueue.get(queue);
    if (!set) this.byQueue.set(queue, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  notify(queue: string): void {
    const set = this.byQueue.get(queue);
    if (!set) return;
    for (const listener of set) {
      try {
        listener();
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  notifyAll(): void {
    for (const queue of this.byQueue.keys()) this.notify(queue);
  }
}
