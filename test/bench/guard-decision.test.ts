import { expect } from "chai";
import { decide, type GuardPair, type GuardSample } from "../../bench/guard-decision";

const PAIRS: GuardPair[] = [{ mode: "received", current: "current-received", earlier: "earlier-received" }];

/** Rounds of the one pair: [current rps, earlier rps] per round. */
function samples(rounds: [number, number][]): GuardSample[] {
  return rounds.flatMap(([current, earlier], i) => [
    { round: i + 1, server: "current-received", rps: current },
    { round: i + 1, server: "earlier-received", rps: earlier },
  ]);
}

describe("bench guard decision", () => {
  it("passes when the current build is as fast within the threshold", () => {
    const verdict = decide(samples([[9700, 10000], [10100, 10000], [9900, 10000]]), PAIRS, 0.05, "HEAD~1");
    expect(verdict.failed).to.equal(false);
    expect(verdict.pairs[0]!.median).to.be.closeTo(0.99, 1e-9);
    expect(verdict.lines[0]).to.match(/^guard passed/);
  });

  it("fails when the median per-round ratio is below 1 - threshold", () => {
    const verdict = decide(samples([[9000, 10000], [9200, 10000], [11000, 10000]]), PAIRS, 0.05, "abc1234");
    expect(verdict.failed).to.equal(true);
    expect(verdict.pairs[0]!.regressed).to.equal(true);
    expect(verdict.lines[0]).to.match(/^GUARD FAILED: received lost more than 5% against abc1234/);
  });

  it("takes ratios within a round, so a drifting machine does not decide", () => {
    // The machine slows down by half over the run; both builds are equal in every round.
    const verdict = decide(samples([[20000, 20000], [10000, 10000], [5000, 5000]]), PAIRS, 0.05, "HEAD~1");
    expect(verdict.failed).to.equal(false);
    expect(verdict.pairs[0]!.ratios).to.deep.equal([1, 1, 1]);
  });

  it("says when a failure comes with rounds spread wider than the margin", () => {
    const noisy = decide(samples([[7000, 10000], [9000, 10000], [12000, 10000]]), PAIRS, 0.05, "HEAD~1");
    expect(noisy.failed).to.equal(true);
    expect(noisy.lines.join("\n")).to.contain("confirm with more rounds");
    const steady = decide(samples([[9000, 10000], [9100, 10000], [9050, 10000]]), PAIRS, 0.05, "HEAD~1");
    expect(steady.failed).to.equal(true);
    expect(steady.lines.join("\n")).not.to.contain("confirm with more rounds");
  });

  it("uses the median, so one disturbed round does not fail the guard", () => {
    const verdict = decide(samples([[10000, 10000], [4000, 10000], [10100, 10000]]), PAIRS, 0.05, "HEAD~1");
    expect(verdict.failed).to.equal(false);
  });

  it("honours a custom threshold", () => {
    const rounds = samples([[9300, 10000], [9300, 10000]]);
    expect(decide(rounds, PAIRS, 0.05, "HEAD~1").failed).to.equal(true);
    expect(decide(rounds, PAIRS, 0.1, "HEAD~1").failed).to.equal(false);
  });

  it("fails when nothing could be compared", () => {
    const verdict = decide(samples([]), PAIRS, 0.05, "HEAD~1");
    expect(verdict.failed).to.equal(true);
    expect(verdict.pairs[0]!.missing).to.equal(true);
    expect(verdict.lines.join("\n")).to.contain("NOT COMPARED");
  });

  it("counts a current build that answered nothing as a loss", () => {
    const verdict = decide(samples([[0, 10000], [0, 10000]]), PAIRS, 0.05, "HEAD~1");
    expect(verdict.failed).to.equal(true);
    expect(verdict.pairs[0]!.median).to.equal(0);
  });

  it("judges every pair: one regressed mode fails the whole guard", () => {
    const pairs: GuardPair[] = [...PAIRS, { mode: "persisted", current: "current-persisted", earlier: "earlier-persisted" }];
    const rounds = [
      ...samples([[10000, 10000], [10000, 10000]]),
      { round: 1, server: "current-persisted", rps: 5000 },
      { round: 1, server: "earlier-persisted", rps: 6000 },
      { round: 2, server: "current-persisted", rps: 5000 },
      { round: 2, server: "earlier-persisted", rps: 6000 },
    ];
    const verdict = decide(rounds, pairs, 0.05, "HEAD~1");
    expect(verdict.failed).to.equal(true);
    expect(verdict.pairs.map((p) => p.regressed)).to.deep.equal([false, true]);
  });

  it("refuses a threshold outside [0, 1)", () => {
    expect(() => decide([], PAIRS, 1, "HEAD~1")).to.throw(RangeError);
    expect(() => decide([], PAIRS, -0.1, "HEAD~1")).to.throw(RangeError);
  });
});
