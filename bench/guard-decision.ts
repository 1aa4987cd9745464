import { max, median, min } from "./stats";

/**
 * The regression guard's verdict, kept pure so that it is unit-tested: per mode, the current
 * build's req/s divided by the earlier build's in the same round (both measured back to back,
 * so the machine's drift touches both alike), the median of those ratios, and a failure when
 * that median is below 1 - threshold.
 */
export interface GuardSample {
  round: number;
  server: string;
  rps: number;
}

/** One comparison: the same mode (ack, store) served by the current and the earlier build. */
export interface GuardPair {
  mode: string;
  current: string;
  earlier: string;
}

export interface PairVerdict {
  mode: string;
  /** current ÷ earlier per round, rounds where both were measured. */
  ratios: number[];
  median: number;
  min: number;
  max: number;
  /** No round had both figures: nothing was compared, which the guard treats as a failure. */
  missing: boolean;
  regressed: boolean;
}

export interface GuardVerdict {
  threshold: number;
  pairs: PairVerdict[];
  failed: boolean;
  /** Human lines, the first of which says pass or fail. */
  lines: string[];
}

export function decide(samples: readonly GuardSample[], pairs: readonly GuardPair[], threshold: number, against: string): GuardVerdict {
  if (!(threshold >= 0 && threshold < 1)) throw new RangeError(`threshold must be in [0, 1), got ${threshold}`);
  const verdicts = pairs.map((pair) => judge(samples, pair, threshold));
  const failed = verdicts.some((v) => v.regressed || v.missing);
  const lines = verdicts.map((v) => describe(v, against, threshold));
  // Rounds spread wider than the margin itself: the verdict may be the machine's, not the build's.
  if (verdicts.some((v) => (v.regressed || v.missing) && v.max - v.min > 2 * threshold)) {
    lines.push(`  the rounds spread wider than ${pctText(2 * threshold)}: on a busy machine, confirm with more rounds (BENCH_ROUNDS=9) before trusting this`);
  }
  const bad = verdicts.filter((v) => v.regressed || v.missing).map((v) => v.mode);
  lines.unshift(
    failed
      ? `GUARD FAILED: ${bad.join(", ")} lost more than ${pctText(threshold)} against ${against} (or could not be compared)`
      : `guard passed: no mode lost more than ${pctText(threshold)} against ${against}`,
  );
  return { threshold, pairs: verdicts, failed, lines };
}

function judge(samples: readonly GuardSample[], pair: GuardPair, threshold: number): PairVerdict {
  const rounds = [...new Set(samples.map((s) => s.round))].sort((a, b) => a - b);
  const ratios: number[] = [];
  for (const round of rounds) {
    const current = samples.find((s) => s.round === round && s.server === pair.current);
    const earlier = samples.find((s) => s.round === round && s.server === pair.earlier);
    // A build that answered nothing in a round counts as a loss there, not as a gap.
    if (current === undefined || earlier === undefined || !(earlier.rps > 0)) continue;
    ratios.push(Number.isFinite(current.rps) ? current.rps / earlier.rps : 0);
  }
  const missing = ratios.length === 0;
  const mid = median(ratios);
  return { mode: pair.mode, ratios, median: mid, min: min(ratios), max: max(ratios), missing, regressed: !missing && mid < 1 - threshold };
}

function describe(v: PairVerdict, against: string, threshold: number): string {
  if (v.missing) return `  ${v.mode}: NOT COMPARED (no round measured both builds)`;
  const change = (v.median - 1) * 100;
  const verdict = v.regressed ? `REGRESSION (below ${(1 - threshold).toFixed(2)})` : "ok";
  return (
    `  ${v.mode}: current ÷ ${against} = ${v.median.toFixed(3)} (${change >= 0 ? "+" : ""}${change.toFixed(1)}%), ` +
    `median of ${v.ratios.length} rounds, range ${v.min.toFixed(2)}–${v.max.toFixed(2)}: ${verdict}`
  );
}

function pctText(threshold: number): string {
  return `${(threshold * 100).toFixed(threshold * 100 < 1 ? 1 : 0)}%`;
}
