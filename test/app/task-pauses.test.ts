import { expect } from "chai";
import { TaskPauses, type Pausable } from "../../src/app/task-pauses";
import { MemoryStore, silentLogger } from "../../src/index";
import type { PauseStore } from "../../src/store/history";
import { until } from "../helpers/wait";

/** A store's pauses whose reads can be held: each answers the set as it was when the read began. */
class HeldReads implements PauseStore {
  private held: Array<() => void> = [];
  hold = false;

  constructor(private readonly inner: PauseStore) {}

  async paused(): Promise<ReadonlySet<string>> {
    const set = await this.inner.paused();
    if (this.hold) await new Promise<void>((resolve) => this.held.push(resolve));
    return set;
  }

  setPaused(task: string, paused: boolean): Promise<void> {
    return this.inner.setPaused(task, paused);
  }

  watch(listener: () => void): () => void {
    return this.inner.watch(listener);
  }

  release(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }
}

class Runner implements Pausable {
  paused = false;
  /** Every state it was put in: a task resumed for a moment claims in that moment. */
  readonly states: boolean[] = [];
  setPaused(paused: boolean): void {
    this.paused = paused;
    this.states.push(paused);
  }
}

describe("task pauses", () => {
  it("keeps a pause made here when a read of the store begun before it answers after it", async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      const pauses = new HeldReads(store.pauses!);
      const runner = new Runner();
      const tasks = new TaskPauses(pauses, new Map([["b", runner]]), silentLogger);
      await tasks.start();
      // A read under way (as when PostgreSQL's listener reconnects, or another replica changed the set).
      pauses.hold = true;
      await store.pauses!.setPaused("other", true);
      await tasks.set("b", true);
      expect(runner.paused).to.equal(true);
      pauses.hold = false;
      pauses.release();
      await new Promise((r) => setTimeout(r, 20));
      await until(() => tasks.isPaused("other"));
      expect(tasks.isPaused("b")).to.equal(true);
      // Paused from the set on, never resumed by the stale read in between.
      expect(runner.states.slice(runner.states.indexOf(true))).to.not.include(false);
      tasks.stop();
    } finally {
      await store.close();
    }
  });
});
