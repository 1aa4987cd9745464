import type { PauseStore } from "../history";
import type { Opened } from "./queue-operations";

/** How often a watched store looks for pauses another process (the CLI) wrote. */
const POLL_MS = 1_000;

/**
 * Paused tasks of an embedded store, in its `paused` database beside the queues: a pause holds
 * across restarts. This process's listeners hear of a change at once; a change another process
 * made to the directory is noticed within a second while someone watches.
 */
export class EmbeddedPauses implements PauseStore {
  private readonly listeners = new Set<() => void>();
  private poll: NodeJS.Timeout | undefined;
  private seen = "";

  constructor(private readonly host: { use(): Opened; opened(): Opened | undefined }) {}

  async paused(): Promise<ReadonlySet<string>> {
    return new Set(this.read(this.host.use()));
  }

  async setPaused(task: string, paused: boolean): Promise<void> {
    if (typeof task !== "string" || task === "") throw new TypeError(`a task to pause is named by a non-empty string, got ${typeof task === "string" ? '""' : typeof task}`);
    const { dbs, writer } = this.host.use();
    if ((dbs.paused.get(task) === true) === paused) return;
    await writer.run(() => (paused ? dbs.paused.put(task, true) : dbs.paused.remove(task)));
    this.seen = this.read(this.host.use()).join("\n");
    this.notify();
  }

  watch(listener: () => void): () => void {
    // A wrapper of its own: the same function watched twice is two subscriptions.
    const entry = (): void => listener();
    this.listeners.add(entry);
    this.startPoll();
    return () => {
      this.listeners.delete(entry);
      if (this.listeners.size === 0) this.stopPoll();
    };
  }

  /** The store closed: no more polling (watchers stay, and polling resumes with the next watch). */
  stop(): void {
    this.stopPoll();
  }

  private read(opened: Opened): string[] {
    return [...opened.dbs.paused.getKeys({})];
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private startPoll(): void {
    if (this.poll) return;
    const opened = this.host.opened();
    if (opened) this.seen = this.read(opened).join("\n");
    this.poll = setInterval(() => {
      const now = this.host.opened();
      if (!now) return;
      const current = this.read(now).join("\n");
      if (current === this.seen) return;
      this.seen = current;
      this.notify();
    }, POLL_MS);
    this.poll.unref();
  }

  private stopPoll(): void {
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
  }
}
