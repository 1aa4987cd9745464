import { expect } from "chai";
import { FlowGate } from "../../src/app/flow/flow-gate";
import type { QueuedMessage } from "../../src/store/store";

const msg = (id: string, concurrencyKey?: string, rateKey?: string): QueuedMessage => ({
  id,
  payload: null,
  attempts: 0,
  enqueuedAt: 0,
  ...(concurrencyKey !== undefined && { concurrencyKey }),
  ...(rateKey !== undefined && { rateKey }),
});
const ids = (messages: readonly QueuedMessage[]) => messages.map((m) => m.id);

describe("FlowGate: the flow limits of the in-process engines", () => {
  it("lets `limit` runs of a key start, queues the rest in arrival order, and starts the next as one finishes", () => {
    let woken = 0;
    const gate = new FlowGate({ concurrency: { limit: 2, key: undefined } }, () => woken++);
    const [a1, a2, a3, b1, a4] = [msg("a1", "a"), msg("a2", "a"), msg("a3", "a"), msg("b1", "b"), msg("a4", "a")];
    expect(ids(gate.admit([a1!, a2!, a3!, b1!, a4!]))).to.deep.equal(["a1", "a2", "b1"]);
    expect(gate.limited).to.equal(2);
    gate.finished(a1!);
    expect(ids([...gate.ready])).to.deep.equal(["a3"]);
    expect(woken).to.equal(1);
    gate.finished(b1!);
    expect(woken, "a free slot of another key starts nothing").to.equal(1);
    expect(ids(gate.drain()).sort()).to.deep.equal(["a3", "a4"]);
    expect(gate.held).to.equal(0);
  });

  it("starts at most `limit` per sliding window of a rate key, and wakes when the window moves on", async () => {
    let now = 1_000;
    let woken = 0;
    const gate = new FlowGate({ rate: { limit: 2, periodMs: 50, key: undefined } }, () => woken++, () => now);
    expect(ids(gate.admit([msg("1", undefined, "r"), msg("2", undefined, "r"), msg("3", undefined, "r"), msg("x", undefined, "other")]))).to.deep.equal(["1", "2", "x"]);
    now += 49;
    expect(ids(gate.admit([msg("4", undefined, "r")])), "behind the one already waiting").to.deep.equal([]);
    now += 1;
    await new Promise((r) => setTimeout(r, 80));
    expect(woken).to.equal(1);
    expect(ids([...gate.ready])).to.deep.equal(["3", "4"]);
    expect(gate.limited).to.equal(0);
  });

  it("counts both limits: a message past its concurrency slot still waits for its rate window", () => {
    const now = 0;
    const gate = new FlowGate({ concurrency: { limit: 1, key: undefined }, rate: { limit: 1, periodMs: 1_000, key: undefined } }, () => undefined, () => now);
    const [a, b] = [msg("a", "k", "k"), msg("b", "k", "k")];
    expect(ids(gate.admit([a!, b!]))).to.deep.equal(["a"]);
    gate.finished(a!);
    expect(gate.ready.length, "its slot is free, its rate window is not").to.equal(0);
    expect(gate.limited).to.equal(1);
    gate.drain();
  });

  it("counts the start of a message it made ready when the runner takes it, and holds its place in the window until then", () => {
    let now = 0;
    const gate = new FlowGate({ rate: { limit: 2, periodMs: 100, key: undefined } }, () => undefined, () => now);
    expect(ids(gate.admit([msg("1", undefined, "r"), msg("2", undefined, "r"), msg("3", undefined, "r"), msg("4", undefined, "r"), msg("5", undefined, "r")]))).to.deep.equal(["1", "2"]);
    now = 100;
    (gate as unknown as { rateWindowMoved: () => void }).rateWindowMoved();
    expect(ids([...gate.ready]), "the window moved on: two may start").to.deep.equal(["3", "4"]);
    // The runner's slots stay busy past the next window: the two not taken still hold it.
    now = 250;
    (gate as unknown as { rateWindowMoved: () => void }).rateWindowMoved();
    expect(ids([...gate.ready]), "nothing more until they start").to.deep.equal(["3", "4"]);
    expect(gate.take()?.id).to.equal("3");
    expect(gate.take()?.id).to.equal("4");
    now = 349;
    (gate as unknown as { rateWindowMoved: () => void }).rateWindowMoved();
    expect(gate.ready.length, "their window counts from when they started").to.equal(0);
    gate.drain();
  });

  it("forgets the rate window of a key once it is idle: thousands of keys seen once do not stay", () => {
    let now = 0;
    const gate = new FlowGate({ rate: { limit: 1, periodMs: 10, key: undefined } }, () => undefined, () => now);
    let started = 0;
    for (let i = 0; i < 20_000; i++) {
      now += 1;
      started += gate.admit([msg(`m${i}`, undefined, `key-${i}`)]).length;
    }
    expect(started).to.equal(20_000);
    expect((gate as unknown as { starts: Map<string, number[]> }).starts.size).to.be.below(3_000);
  });
});
