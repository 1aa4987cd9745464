import { expect } from "chai";
import { ClaimedIds } from "../../../src/store/claimed-ids";
import { LaneWaiting, type WaitingEntry } from "../../../src/store/embedded/journal/lane-waiting";

interface Entry extends WaitingEntry {
  readonly name: string;
}

const entry = (seq: number): Entry => ({ seq, name: `e${seq}`, waiting: false });

describe("the embedded store's per-message structures", () => {
  it("ClaimedIds finds, replaces and removes by id, below and above the size where it keeps an index, and back", () => {
    const claimed = new ClaimedIds<string, number>();
    const live = new Map<string, number>();
    const steps = [...Array.from({ length: 200 }, (_, i) => i), ...Array.from({ length: 197 }, (_, i) => -1 - ((i * 37) % 200))];
    for (const step of steps) {
      if (step >= 0) {
        claimed.set(`m${step}`, step);
        live.set(`m${step}`, step);
      } else {
        const id = `m${-1 - step}`;
        expect(claimed.delete(id)).to.equal(live.delete(id));
      }
      expect(claimed.size).to.equal(live.size);
    }
    for (let i = 0; i < 200; i++) expect(claimed.get(`m${i}`)).to.equal(live.get(`m${i}`));
    expect([...claimed.values()].sort((a, b) => a - b)).to.deep.equal([...live.values()].sort((a, b) => a - b));
    expect(claimed.delete("m-none")).to.equal(false);
    const [first] = live.keys();
    claimed.set(first, -5);
    expect(claimed.size).to.equal(live.size);
    expect(claimed.get(first)).to.equal(-5);
  });

  it("ClaimedIds keeps claim order while it scans", () => {
    const claimed = new ClaimedIds<string, string>();
    for (const id of ["a", "b", "c", "d"]) claimed.set(id, id.toUpperCase());
    claimed.delete("b");
    claimed.set("e", "E");
    expect([...claimed.values()]).to.deep.equal(["A", "C", "D", "E"]);
  });

  it("ClaimedIds by entry number: counts, finds, keeps claim order, and forgets everything on clear", () => {
    const byId = new ClaimedIds<number, string>();
    for (let id = 1; id <= 5_000; id++) byId.set(id, `v${id}`);
    for (let id = 1; id <= 5_000; id++) if (id % 3 !== 0) expect(byId.delete(id)).to.equal(true);
    expect(byId.delete(1)).to.equal(false);
    expect(byId.size).to.equal(1_666);
    expect(byId.has(3)).to.equal(true);
    expect(byId.has(4)).to.equal(false);
    expect(byId.get(4_998)).to.equal("v4998");
    byId.set(3, "again");
    expect(byId.size).to.equal(1_666);
    expect(new Set(byId.values()).size).to.equal(1_666);
    byId.clear();
    expect(byId.size).to.equal(0);
    expect(byId.get(6)).to.equal(undefined);
    expect([...byId.values()]).to.deep.equal([]);
    for (const id of [7, 8, 9]) byId.set(id, `w${id}`);
    byId.delete(8);
    expect([...byId.values()]).to.deep.equal(["w7", "w9"]);
  });

  it("LaneWaiting keeps entries in queue order through claims from the front and the middle, and puts a released one back at its place", () => {
    const line = new LaneWaiting<Entry>();
    const entries = Array.from({ length: 3_000 }, (_, i) => entry(i + 1));
    for (const e of entries) line.add(e);
    expect(line.size).to.equal(3_000);
    // Claimed from the front (the head moves, the array is cut as entries are added) and a few from the middle.
    for (let i = 0; i < 2_500; i++) expect(line.delete(entries[i])).to.equal(true);
    expect(line.delete(entries[2_700])).to.equal(true);
    expect(line.delete(entries[2_700])).to.equal(false);
    expect(line.has(entries[2_700])).to.equal(false);
    expect(line.has(entries[2_600])).to.equal(true);
    const more = Array.from({ length: 10 }, (_, i) => entry(3_001 + i));
    for (const e of more) line.add(e);
    expect(line.size).to.equal(509);
    // Released: back between its neighbours, not at the end.
    line.add(entries[2_700]);
    line.add(entries[10]);
    expect(line.size).to.equal(511);
    const seqs = [...line.values()].map((e) => e.seq);
    expect(seqs).to.have.length(511);
    expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    expect(seqs[0]).to.equal(11);
    expect(seqs).to.include(2_701);
    // Adding an entry already waiting changes nothing.
    line.add(entries[2_600]);
    expect(line.size).to.equal(511);
    line.clear();
    expect(line.size).to.equal(0);
    expect([...line.values()]).to.deep.equal([]);
    expect(entries[2_600].waiting).to.equal(false);
  });

  it("LaneWaiting lets a claim remove entries while it iterates", () => {
    const line = new LaneWaiting<Entry>();
    const entries = Array.from({ length: 5 }, (_, i) => entry(i + 1));
    for (const e of entries) line.add(e);
    const seen: number[] = [];
    for (const e of line.values()) {
      seen.push(e.seq);
      if (e.seq !== 3) line.delete(e);
    }
    expect(seen).to.deep.equal([1, 2, 3, 4, 5]);
    expect([...line.values()].map((e) => e.seq)).to.deep.equal([3]);
  });
});
