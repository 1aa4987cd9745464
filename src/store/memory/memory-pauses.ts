import type { PauseStore } from "../history";

/** Paused tasks of a memory store: gone with the process, as its queues are. */
export class MemoryPauses implements PauseStore {
  private readonly tasks = new Set<string>();
  private readonly listeners = new Set<() => void>();

  async paused(): Promise<ReadonlySet<string>> {
    return new Set(this.tasks);
  }

  async setPaused(task: string, paused: boolean): Promise<void> {
    if (paused === this.tasks.has(task)) return;
    if (paused) this.tasks.add(task);
    else this.tasks.delete(task);
    for (const listener of [...this.listeners]) listener();
  }

  watch(listener: () => void): () => void {
    // A wrapper of its own: the same function watched twice is two subscriptions.
    const entry = () => listener();
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }
}
