import { ReplayError } from "./event-replay";

/**
 * The replays `app.events` has under way, for stop(): from stop() on a replay is refused, a
 * bulk replay under way queues nothing more (its pacing pause ends at once), and stop() waits
 * for the write each one has in flight before the store closes.
 */
export class ReplayRuns {
  private readonly ending = new AbortController();
  private readonly running = new Set<Promise<void>>();

  /** Runs one replay, given the signal the app's stop aborts; refused once stop() has begun. */
  run<T>(replay: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.ending.signal.aborted) return Promise.reject(new ReplayError("app.events.replay: the app is stopping, or stopped: no replay is queued from stop() on"));
    const result = replay(this.ending.signal);
    // Its failure is the caller's to handle: here it only ends the wait.
    const settled = result.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return result;
  }

  /** Replays under way. */
  get size(): number {
    return this.running.size;
  }

  /** Refuses replays from now on and stops the bulk ones; resolves once those under way have ended. */
  async end(): Promise<void> {
    this.ending.abort();
    await Promise.all(this.running);
  }
}
