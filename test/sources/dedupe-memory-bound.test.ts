import { expect } from "chai";
import { DEFAULT_MEMORY_DEDUPE_MARKERS } from "../../src/store/memory/memory-markers";
import { MemoryStore } from "../../src/store/memory/memory-store";
import { useApps, webhook } from "../helpers/app";
import { send } from "../helpers/http-client";
import { recordingLogger, type LogLine } from "../helpers/wait";

/**
 * The memory store keeps its deduplication markers in the heap: past a count the oldest are
 * forgotten (a steady sender would otherwise grow the heap until the process ends, taking
 * every queued event with it), with a warning at most once a minute.
 */
describe("memory store: deduplication markers are bounded in count", function () {
  this.timeout(10_000);
  const newApp = useApps();

  it("past maxDedupeMarkers the oldest are forgotten: a repeat of one is accepted again, once warned", async () => {
    const lines: LogLine[] = [];
    const store = new MemoryStore({}, { maxDedupeMarkers: 3, logger: recordingLogger(lines) });
    const app = newApp(undefined, { store });
    const source = webhook({ dedupe: { header: "x-delivery-id" } });
    app.task({ source, name: "t" }, () => undefined);
    await app.start();
    const deliver = (id: string) => send(source.url, { body: "x", headers: { "x-delivery-id": id } });
    for (const id of ["d1", "d2", "d3"]) expect((await deliver(id)).status).to.equal(202);
    expect((await deliver("d1")).status, "within the bound, a repeat is a duplicate").to.equal(200);
    expect(lines).to.deep.equal([]);

    for (const id of ["d4", "d5"]) expect((await deliver(id)).status).to.equal(202);
    for (const id of ["d3", "d4", "d5"]) {
      const repeat = await deliver(id);
      expect(repeat.status, id).to.equal(200);
      expect(repeat.json()).to.deep.include({ duplicate: true });
    }
    // d1 and d2 were the oldest: forgotten, so their repeats are new events.
    expect((await deliver("d1")).status).to.equal(202);
    const warnings = lines.filter((l) => l.msg.includes("deduplication markers"));
    expect(warnings, "one warning a minute, however many are forgotten").to.have.length(1);
    expect(warnings[0].msg).to.contain("holds 3 deduplication markers").and.contain("accepted again as a new event");
    expect(warnings[0].fields).to.deep.include({ store: "memory", maxMarkers: 3 });
  });

  it(`keeps ${DEFAULT_MEMORY_DEDUPE_MARKERS.toLocaleString("en")} markers by default, oldest forgotten first`, async () => {
    const store = new MemoryStore();
    await store.open();
    try {
      const markers = store.state("dedupe:t");
      const extra = 1_000;
      for (let i = 0; i < DEFAULT_MEMORY_DEDUPE_MARKERS + extra; i++) await markers.setIfAbsent(`k${i}`, "event", { ttlMs: 60_000 });
      expect(await markers.get("k0")).to.equal(undefined);
      expect(await markers.get(`k${extra - 1}`)).to.equal(undefined);
      expect(await markers.get(`k${extra}`)).to.equal("event");
      expect(await markers.get(`k${DEFAULT_MEMORY_DEDUPE_MARKERS + extra - 1}`)).to.equal("event");
    } finally {
      await store.close();
    }
  });

  it("bounds only the markers: task and app state is the user's data, never forgotten to make room", async () => {
    const store = new MemoryStore({}, { maxDedupeMarkers: 2 });
    const state = store.state("task:t");
    const appState = store.state("app:settings");
    for (let i = 0; i < 5; i++) {
      await state.set(`s${i}`, i, { ttlMs: 60_000 });
      await appState.set(`a${i}`, i);
    }
    const markers = store.state("dedupe:t");
    for (let i = 0; i < 5; i++) await markers.setIfAbsent(`k${i}`, "event", { ttlMs: 60_000 });
    for (let i = 0; i < 5; i++) {
      expect(await state.get(`s${i}`)).to.equal(i);
      expect(await appState.get(`a${i}`)).to.equal(i);
    }
    expect(await markers.get("k2")).to.equal(undefined);
    expect(await markers.get("k3")).to.equal("event");
  });

  it("a marker written again keeps its age; one forgotten and written again is new", async () => {
    const store = new MemoryStore({}, { maxDedupeMarkers: 2 });
    const markers = store.state("dedupe:t");
    await markers.setIfAbsent("a", { storing: "e1" }, { ttlMs: 60_000 });
    await markers.setIfAbsent("b", { storing: "e2" }, { ttlMs: 60_000 });
    await markers.set("a", "e1", { ttlMs: 60_000 }); // the reservation becomes the marker: still the oldest
    await markers.delete("b");
    await markers.set("b", "e2", { ttlMs: 60_000 }); // written again after a delete: the newest
    await markers.setIfAbsent("c", "e3", { ttlMs: 60_000 });
    expect(await markers.get("a")).to.equal(undefined);
    expect(await markers.get("b")).to.equal("e2");
    expect(await markers.get("c")).to.equal("e3");
  });

  it("refuses a maxDedupeMarkers that is not an integer >= 1", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryStore({}, { maxDedupeMarkers: bad }), String(bad)).to.throw(TypeError, "MemoryStore: maxDedupeMarkers must be an integer >= 1");
    }
  });
});
