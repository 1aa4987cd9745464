import { expect } from "chai";
import type { EventsApi } from "../../src/app/events-api";
import { BulkReplays } from "../../src/console/bulk-replays";
import { MemoryStore, silentLogger, type StateStore } from "../../src/index";
import { Hold } from "../helpers/hold";
import { until } from "../helpers/wait";

/**
 * The console's bulk replay notes itself in the app's store (one at a time across replicas). A
 * start waiting for that note when the app begins to stop takes it, then gives it back: the
 * stop must wait for that, or the note outlives the store's close and blocks every replica's
 * bulk replay until it expires.
 */
describe("BulkReplays: a start in flight when the app stops", () => {
  it("stop() resolves only once the note that start took is given back", async () => {
    const store = new MemoryStore();
    await store.open();
    const state = store.state("bulk");
    const gate = new Hold();
    const shared: StateStore = {
      get: (key) => state.get(key),
      set: (key, value, options) => state.set(key, value, options),
      delete: (key) => state.delete(key),
      setIfAbsent: async (key, value, options) => {
        const taken = await state.setIfAbsent(key, value, options);
        await gate.pass();
        return taken;
      },
    };
    let replays = 0;
    const events = { replay: async () => ((replays++, { matched: 0, queued: 0 })) } as unknown as EventsApi;
    const bulk = new BulkReplays(events, silentLogger, shared, "shop");
    const release = gate.hold();
    const started = bulk.start({}, "", {});
    await until(() => gate.held === 1);
    const stopped = bulk.stop();
    release();
    await stopped;
    expect(await state.get("running:shop"), "the note, once stop() resolved").to.equal(undefined);
    expect((await started.then(() => "started", (error: Error) => error.message)).toString()).to.match(/stopping/);
    expect(replays).to.equal(0);
    await store.close();
  });
});
